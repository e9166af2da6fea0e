/**
 * Does a pod accept TCP connections on a port? Asked through the API server's port-forward (the
 * CLI is usually outside the cluster network): the node dials the port as soon as the forward
 * opens and reports a refused connection on the error stream. This is how `service_healthy` is
 * awaited for a dependency without a healthcheck (docs/compose.md).
 */
import { PassThrough } from 'node:stream';
import type { KubeClient } from './client.ts';
import { sleep } from '../base/wait.ts';

export async function podAcceptsTcp(client: KubeClient, pod: string, port: number, listenMs = 1500): Promise<boolean> {
  const output = new PassThrough();
  const errors = new PassThrough();
  let refused = false;
  errors.on('data', (chunk: Buffer) => {
    if (chunk.toString().trim()) refused = true;
  });
  output.resume();
  let forward: PortForwardConnection | undefined;
  try {
    forward = await openPortForward(client, pod, port, output, errors);
    await sleep(listenMs);
    return !refused;
  } catch {
    return false;
  } finally {
    forward?.close();
  }
}

/** One connection to a pod's port through the API server: the port's bytes go to `output`, the node's errors to `errors`. */
interface PortForwardConnection {
  /** Registers `listener` for the end of the forward (the connection closed, or the node gave up). */
  onClose(listener: () => void): void;
  close(): void;
}

async function openPortForward(
  client: Pick<KubeClient, 'kc' | 'namespace'>,
  pod: string,
  port: number,
  output: PassThrough,
  errors: PassThrough,
): Promise<PortForwardConnection> {
  const { PortForward } = await import('@kubernetes/client-node');
  const input = new PassThrough();
  try {
    const opened = await new PortForward(client.kc, true).portForward(client.namespace, pod, [port], output, errors, input);
    const socket: { close(): void; once?(event: 'close', listener: () => void): unknown } | undefined =
      typeof opened === 'function' ? (opened() ?? undefined) : opened;
    return {
      onClose: (listener) => socket?.once?.('close', listener),
      close: () => {
        input.end();
        socket?.close();
      },
    };
  } catch (err) {
    input.end();
    throw err;
  }
}

/** What a pod's port said when asked through the port-forward (podPortGreeting). */
export type PortGreeting =
  /** It accepted the connection and sent these first bytes. */
  | { kind: 'greeted'; first: string }
  /** Nothing listens there yet, or the pod has no sandbox yet (the node answers 500), or it said nothing in time. */
  | { kind: 'not-yet'; why: string }
  /** The pod does not exist (any more). */
  | { kind: 'gone' };

/**
 * Connects to a pod's port through the port-forward and reads what it sends first: a server that
 * speaks first (SSH's version line) proves it is up from the outside, without waiting for the
 * kubelet to report the container running. A refused connection comes back on the error stream in
 * some 20 ms; a pod without a sandbox yet is a 500, a missing pod a 404.
 */
export async function podPortGreeting(client: Pick<KubeClient, 'kc' | 'namespace'>, pod: string, port: number, timeoutMs: number): Promise<PortGreeting> {
  const output = new PassThrough();
  const errors = new PassThrough();
  let forward: PortForwardConnection | undefined;
  let timer: NodeJS.Timeout | undefined;
  let settle: (g: PortGreeting) => void = () => undefined;
  try {
    const answer = new Promise<PortGreeting>((resolve) => {
      settle = resolve;
      output.once('data', (chunk: Buffer) => resolve({ kind: 'greeted', first: chunk.toString('latin1') }));
      errors.on('data', (chunk: Buffer) => {
        const why = chunk.toString().trim();
        if (why) resolve({ kind: 'not-yet', why });
      });
      timer = setTimeout(() => resolve({ kind: 'not-yet', why: `nothing said within ${timeoutMs} ms` }), timeoutMs);
    });
    forward = await openPortForward(client, pod, port, output, errors);
    forward.onClose(() => settle({ kind: 'not-yet', why: 'the port-forward closed' }));
    return await answer;
  } catch (err) {
    const why = (err as Error).message ?? String(err);
    return /\b404\b/.test(why) ? { kind: 'gone' } : { kind: 'not-yet', why };
  } finally {
    clearTimeout(timer);
    forward?.close();
  }
}
