/**
 * Does a pod accept TCP connections on a port? Asked through the API server's port-forward (the
 * CLI is usually outside the cluster network): the node dials the port as soon as the forward
 * opens and reports a refused connection on the error stream. This is how `service_healthy` is
 * awaited for a dependency without a healthcheck (ruling 3).
 */
import { PassThrough } from 'node:stream';
import type { KubeClient } from './client.ts';
import { sleep } from '../base/wait.ts';

export async function podAcceptsTcp(client: KubeClient, pod: string, port: number, listenMs = 1500): Promise<boolean> {
  const { PortForward } = await import('@kubernetes/client-node');
  const forward = new PortForward(client.kc, true);
  const output = new PassThrough();
  const errors = new PassThrough();
  const input = new PassThrough();
  let refused = false;
  errors.on('data', (chunk: Buffer) => {
    if (chunk.toString().trim()) refused = true;
  });
  output.resume();
  let socket: { close(): void } | undefined;
  try {
    const opened = await forward.portForward(client.namespace, pod, [port], output, errors, input);
    socket = typeof opened === 'function' ? (opened() ?? undefined) : opened;
    await sleep(listenMs);
    return !refused;
  } catch {
    return false;
  } finally {
    input.end();
    socket?.close();
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
  const { PortForward } = await import('@kubernetes/client-node');
  const output = new PassThrough();
  const errors = new PassThrough();
  const input = new PassThrough();
  let socket: { close(): void; once?(event: 'close', listener: () => void): unknown } | undefined;
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
    const opened = await new PortForward(client.kc, true).portForward(client.namespace, pod, [port], output, errors, input);
    socket = typeof opened === 'function' ? (opened() ?? undefined) : opened;
    socket?.once?.('close', () => settle({ kind: 'not-yet', why: 'the port-forward closed' }));
    return await answer;
  } catch (err) {
    const why = (err as Error).message ?? String(err);
    return /\b404\b/.test(why) ? { kind: 'gone' } : { kind: 'not-yet', why };
  } finally {
    clearTimeout(timer);
    input.end();
    socket?.close();
  }
}
