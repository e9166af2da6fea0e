/**
 * Runs a command in a pod's container through the API server (the exec subresource over a
 * WebSocket, as `kubectl exec` does), optionally fed a standard input, and captures its output.
 * Nothing of the command's own machinery is needed, which is what `doctor` wants when that
 * machinery is what is broken.
 */
import { PassThrough, Writable } from 'node:stream';
import { DevtoolError } from '../base/errors.ts';
import type { ClientOptions } from 'ws';
import type { KubeClient } from './client.ts';
import { sleep } from '../base/wait.ts';

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

export async function execCapture(
  client: KubeClient,
  pod: string,
  container: string,
  command: string[],
  o: ExecOptions & { stdin?: StdinWriter },
): Promise<ExecCapture> {
  const { Exec } = await import('@kubernetes/client-node');
  const exec = new Exec(client.kc, o.stdin ? await unmaskedSockets(client) : undefined);
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
    const stdin = o.stdin ? new PassThrough() : null;
    exec
      .exec(client.namespace, pod, container, command, stdout, errors, stdin, false, (s) => (status = s))
      .then(
        (ws) => {
          socket = ws;
          // Ending `stdin` makes client-node send the end of standard input, after what was sent.
          if (o.stdin && stdin)
            o.stdin(framedSender(ws)).then(
              () => stdin.end(),
              (err: Error) => ws.close(1011, err.message.slice(0, 100)),
            );
          ws.on('close', () => {
            clearTimeout(timer);
            const exit = status?.details?.causes?.find((c) => c.reason === 'ExitCode')?.message;
            const code = status?.status === 'Success' ? 0 : exit !== undefined ? Number(exit) : truncated ? 0 : -1;
            resolve({
              code,
              stdout: Buffer.concat(chunks),
              stderr,
              truncated,
              ...(status?.message && status.status !== 'Success' ? { message: status.message } : {}),
            });
          });
        },
        (err: unknown) => {
          clearTimeout(timer);
          reject(err);
        },
      );
  });
}

/** Bytes the WebSocket may hold queued before `send` waits, and how far it waits for it to drain (framedSender). */
const STDIN_HIGH_WATER = 4 * 1024 * 1024;
const STDIN_LOW_WATER = 1024 * 1024;

/** Bytes a stdin message starts with that the writer leaves free: the channel number goes there. */
export const STDIN_HEADROOM = 1;
/** The exec protocol's channel of standard input. */
const STDIN_CHANNEL = 0;

/**
 * Bulk standard input, written straight into WebSocket messages (sync/tar-writer.ts): the writer
 * calls `send` with buffers whose first STDIN_HEADROOM bytes it left free, so that no byte is
 * copied again to make a message (client-node's own stdin copies every chunk into a new one).
 * `send` resolves once the socket can take more.
 */
export type StdinWriter = (send: (message: Buffer) => Promise<void>) => Promise<void>;

/**
 * The `send` of a StdinWriter. client-node forwards stdin without backpressure (every chunk is
 * sent at once), so a big input (a whole source tree) would sit in memory whole: here `send`
 * waits while the socket has more than STDIN_HIGH_WATER queued, until it is down to LOW_WATER.
 */
export function framedSender(ws: { bufferedAmount: number; readyState: number; send(data: Buffer): void }): (message: Buffer) => Promise<void> {
  const open = () => {
    if (ws.readyState !== 1) throw new Error('the exec connection closed');
  };
  return async (message) => {
    open();
    message[0] = STDIN_CHANNEL;
    ws.send(message);
    if (ws.bufferedAmount <= STDIN_HIGH_WATER) return;
    while (ws.bufferedAmount > STDIN_LOW_WATER) {
      await sleep(1);
      open();
    }
  };
}

/**
 * WebSockets whose frames this end sends with a zero mask, which `ws` then skips applying. The
 * mask exists so that a browser page cannot shape bytes for a caching proxy; a CLI talking to its
 * API server has no such page, and XOR-ing 100 MB in JavaScript costs about 0.75 s of CPU
 * (profiled: the largest item of a bulk stdin). The handler is client-node's own, given a socket
 * factory (its constructor's documented hook; not re-exported, hence the deep import).
 */
async function unmaskedSockets(client: KubeClient) {
  const [{ WebSocketHandler }, { default: WebSocket }] = await Promise.all([import('@kubernetes/client-node/dist/web-socket-handler.js'), import('ws')]);
  return new WebSocketHandler(
    client.kc,
    (uri: string, protocols: string[], opts: ClientOptions) => new WebSocket(uri, protocols, { ...opts, generateMask: (mask: Buffer) => void mask.fill(0) }),
  );
}
