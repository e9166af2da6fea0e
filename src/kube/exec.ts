/**
 * Runs a command in a pod's container through the API server (the exec subresource over a
 * WebSocket, as `kubectl exec` does) and captures its output. Nothing of the command's own
 * machinery is needed, which is what `doctor` wants when that machinery is what is broken.
 */
import { Writable } from 'node:stream';
import { DevtoolError } from '../cli/errors.ts';
import type { KubeClient } from './client.ts';

export interface ExecCapture {
  /** The exit code; -1 when the command did not run (no such executable, container not running). */
  code: number;
  stdout: Buffer;
  stderr: string;
  /** stdout went past `maxBytes` and was cut there. */
  truncated: boolean;
  /** The API server's reason when the command did not run or failed. */
  message?: string;
}

export interface ExecOptions {
  timeoutMs: number;
  /** stdout kept at most; the exec is ended once it goes past. */
  maxBytes: number;
}

export async function execCapture(client: KubeClient, pod: string, container: string, command: string[], o: ExecOptions): Promise<ExecCapture> {
  const { Exec } = await import('@kubernetes/client-node');
  type Socket = Awaited<ReturnType<InstanceType<typeof Exec>['exec']>>;
  let socket: Socket | undefined;
  const chunks: Buffer[] = [];
  let size = 0;
  let truncated = false;
  let stderr = '';
  const stdout = new Writable({
    write(chunk: Buffer, _enc, done) {
      if (size < o.maxBytes) chunks.push(chunk.subarray(0, o.maxBytes - size));
      size += chunk.length;
      if (size > o.maxBytes && !truncated) {
        truncated = true;
        socket?.close();
      }
      done();
    },
  });
  const errors = new Writable({
    write(chunk: Buffer, _enc, done) {
      if (stderr.length < 64 * 1024) stderr += chunk.toString('utf8');
      done();
    },
  });
  let status: { status?: string; message?: string; reason?: string; details?: { causes?: { reason?: string; message?: string }[] } } | undefined;
  return new Promise<ExecCapture>((resolve, reject) => {
    const timer = setTimeout(() => {
      socket?.close();
      reject(new DevtoolError(`exec in pod ${pod}: no answer in ${Math.round(o.timeoutMs / 1000)}s`));
    }, o.timeoutMs);
    new Exec(client.kc)
      .exec(client.namespace, pod, container, command, stdout, errors, null, false, (s) => (status = s))
      .then(
        (ws) => {
          socket = ws;
          ws.on('close', () => {
            clearTimeout(timer);
            const exit = status?.details?.causes?.find((c) => c.reason === 'ExitCode')?.message;
            const code = status?.status === 'Success' ? 0 : exit !== undefined ? Number(exit) : truncated ? 0 : -1;
            resolve({ code, stdout: Buffer.concat(chunks), stderr, truncated, ...(status?.message && status.status !== 'Success' ? { message: status.message } : {}) });
          });
        },
        (err: unknown) => {
          clearTimeout(timer);
          reject(err);
        },
      );
  });
}
