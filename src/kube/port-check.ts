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
