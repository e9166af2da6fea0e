/**
 * The few raw calls the dashboard makes to the API server with one token: GET and POST of JSON, and
 * a watch's stream of JSON lines. Raw, not client-node's typed clients: the summaries read objects
 * as the API server sends them, the same from a list as from a watch event. Connections are kept
 * alive (one agent per API server and CA), as in kube-api.ts.
 */
import { Agent, request, type RequestOptions } from 'node:https';
import { request as httpRequest } from 'node:http';
import { createInterface } from 'node:readline';
import type * as k8s from '@kubernetes/client-node';

export class KubeHttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export interface KubeHttp {
  get(path: string): Promise<unknown>;
  post(path: string, body: unknown): Promise<unknown>;
  /** Calls `line` with each JSON line of the answer until it ends (resolves) or `signal` aborts. */
  stream(path: string, line: (value: unknown) => void, signal: AbortSignal): Promise<void>;
  /** Calls `line` with each text line of the answer (a pod's log) until it ends (resolves) or `signal` aborts. */
  lines(path: string, line: (text: string) => void, signal: AbortSignal): Promise<void>;
}

const agents = new Map<string, Agent>();

/** The API server of `kc` (its cluster and CA), acting with the credentials it names. */
export async function kubeHttp(kc: k8s.KubeConfig): Promise<KubeHttp> {
  const cluster = kc.getCurrentCluster();
  if (!cluster) throw new Error('no Kubernetes cluster in the service credentials');
  const base: RequestOptions = {};
  await kc.applyToHTTPSOptions(base);
  const key = `${cluster.server}\n${String(base.ca)}`;
  let agent = agents.get(key);
  if (!agent) {
    agent = new Agent({ keepAlive: true, timeout: 30_000, ...(base.ca ? { ca: base.ca } : {}), rejectUnauthorized: base.rejectUnauthorized !== false });
    agents.set(key, agent);
  }
  const server = new URL(cluster.server);
  const send = (method: string, path: string, body: string | undefined, signal?: AbortSignal) =>
    new Promise<import('node:http').IncomingMessage>((resolve, reject) => {
      const url = new URL(path, server);
      const headers = { ...(base.headers as Record<string, string>), accept: 'application/json', ...(body ? { 'content-type': 'application/json' } : {}) };
      const options = { method, headers, ...(signal ? { signal } : {}) };
      const req = url.protocol === 'http:' ? httpRequest(url, options, resolve) : request(url, { ...options, agent }, resolve);
      req.on('error', reject);
      req.end(body);
    });
  const json = async (method: string, path: string, body?: unknown) => {
    const res = await send(method, path, body === undefined ? undefined : JSON.stringify(body));
    const chunks: Buffer[] = [];
    for await (const c of res) chunks.push(c as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    const status = res.statusCode ?? 0;
    if (status >= 300)
      throw new KubeHttpError(status, `${method} ${path}: ${status} ${(JSON.parse(text || '{}') as { message?: string }).message ?? ''}`.trim());
    return JSON.parse(text) as unknown;
  };
  const textLines = async (path: string, signal: AbortSignal, line: (text: string) => void) => {
    let res: import('node:http').IncomingMessage;
    try {
      res = await send('GET', path, undefined, signal);
    } catch (err) {
      if (signal.aborted) return;
      throw err;
    }
    if ((res.statusCode ?? 0) >= 300) {
      res.resume();
      throw new KubeHttpError(res.statusCode ?? 0, `GET ${path}: ${res.statusCode}`);
    }
    const lines = createInterface({ input: res, crlfDelay: Number.POSITIVE_INFINITY });
    try {
      for await (const l of lines) line(l);
    } catch (err) {
      if (!signal.aborted) throw err;
    }
  };
  return {
    get: (path) => json('GET', path),
    post: (path, body) => json('POST', path, body),
    stream: (path, line, signal) =>
      textLines(path, signal, (l) => {
        if (l.trim()) line(JSON.parse(l));
      }),
    lines: (path, line, signal) => textLines(path, signal, line),
  };
}
