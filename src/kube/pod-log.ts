/**
 * A container's log from the API server's pod log endpoint, streamed as it comes. Its own request
 * over node:http(s) rather than the client's `Log` class: that class drops `tailLines=0`, and a
 * stream it is asked to abort fails with an error no caller can catch. The request gets its agent
 * and credentials from the KubeConfig as every other request does (transport.ts bounds the wait
 * for its first byte; after that a followed log runs as long as it runs).
 */
import type { IncomingMessage, RequestOptions } from 'node:http';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { DevtoolError } from '../base/errors.ts';
import type { KubeClient } from './client.ts';
import { describeKubeError } from './config.ts';

export interface PodLogQuery {
  follow: boolean;
  tailLines?: number;
  sinceSeconds?: number;
  /** RFC 3339; only one of sinceSeconds and sinceTime. */
  sinceTime?: string;
  timestamps: boolean;
}

/** A log being read: `done` settles when it ends (rejects when it fails); `stop` ends it, and `done` then resolves. */
export interface PodLogStream {
  done: Promise<void>;
  stop(): void;
}

/** The query string of a log request. */
export function podLogParams(container: string, q: PodLogQuery): URLSearchParams {
  const params = new URLSearchParams({ container });
  if (q.follow) params.set('follow', 'true');
  if (q.tailLines !== undefined) params.set('tailLines', String(q.tailLines));
  if (q.sinceSeconds !== undefined) params.set('sinceSeconds', String(q.sinceSeconds));
  if (q.sinceTime !== undefined) params.set('sinceTime', q.sinceTime);
  if (q.timestamps) params.set('timestamps', 'true');
  return params;
}

/** Opens the log of `container` of `pod` in the client's namespace; its bytes go to `data`. */
export function openPodLog(client: KubeClient, pod: string, container: string, query: PodLogQuery, data: (chunk: Buffer) => void): PodLogStream {
  let stopped = false;
  let abort: (() => void) | undefined;
  const done = (async () => {
    const cluster = client.kc.getCurrentCluster();
    if (!cluster) throw new DevtoolError(`context "${client.context.name}" has no cluster`);
    // Appended, not resolved: a server URL may carry a path (a proxy's /k8s/clusters/ID).
    const path = `/api/v1/namespaces/${encodeURIComponent(client.namespace)}/pods/${encodeURIComponent(pod)}/log`;
    const url = new URL(`${cluster.server.replace(/\/+$/, '')}${path}?${podLogParams(container, query)}`);
    const opts: RequestOptions = { method: 'GET', headers: { Accept: '*/*' } };
    await client.kc.applyToHTTPSOptions(opts);
    if (stopped) return;
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    await new Promise<void>((resolve, reject) => {
      const req = send(url, opts, (res) => {
        if ((res.statusCode ?? 500) >= 400) {
          refusal(res).then(reject, reject);
          return;
        }
        res.on('data', (chunk: Buffer) => {
          if (!stopped) data(chunk);
        });
        // A connection dropped mid-log ends without `complete`; its error event is the same news.
        res.on('error', () => {});
        res.on('close', () => (res.complete || stopped ? resolve() : reject(new DevtoolError('the connection closed before the log ended'))));
      });
      abort = () => {
        req.destroy();
        resolve();
      };
      req.on('error', (err) => (stopped ? resolve() : reject(err)));
      req.end();
    });
  })();
  return {
    done,
    stop: () => {
      stopped = true;
      abort?.();
    },
  };
}

/** A refused request's reason, from the Status the API server answers with. */
async function refusal(res: IncomingMessage): Promise<DevtoolError> {
  const chunks: Buffer[] = [];
  for await (const chunk of res) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8').slice(0, 4096);
  return new DevtoolError(`${res.statusCode} ${describeKubeError({ body: text, message: text })}`);
}
