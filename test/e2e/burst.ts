/**
 * A request burst against the devtool service through the front door, from parallel clients, while
 * something happens to the service (a pod deleted, a rollout): authenticated GET /api/v1/me and
 * token creations, each retried once on failure as a client would. It counts what failed once, what
 * was lost (failed twice) and when each request finished, so a test can assert that nothing was lost.
 */
import { Agent, request } from 'node:https';

export interface Answer {
  status?: number;
  body?: string;
  error?: string;
}

/** One HTTPS request, trusting what the agent trusts; never throws (an error is in `error`). */
export function call(base: string, agent: Agent, method: string, path: string, token?: string, body?: unknown): Promise<Answer> {
  return new Promise((resolve) => {
    const headers: Record<string, string> = { accept: 'application/json' };
    if (token) headers['authorization'] = `Bearer ${token}`;
    if (body !== undefined) headers['content-type'] = 'application/json';
    const req = request(`${base}${path}`, { method, agent, headers, timeout: 15_000 }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode, body: text }));
      res.on('error', (e: NodeJS.ErrnoException) => resolve({ error: `${e.code ?? ''} ${e.message}` }));
    });
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', (e: NodeJS.ErrnoException) => resolve({ error: `${e.code ?? ''} ${e.message}` }));
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

export interface BurstOptions {
  base: string;
  ca: string;
  token: string;
  /** The user the token belongs to: every /me answer must name it. */
  user: string;
  gets: number;
  /** Token creations, named `<tokenPrefix>-<i>` (the token routes allow 30 a minute per client and replica). */
  tokens: number;
  tokenPrefix: string;
  clients: number;
  /** Pause of each client between its requests: spreads the burst over time. */
  pauseMs: number;
}

export interface BurstResult {
  requests: number;
  seconds: number;
  /** Failures that the one retry repaired, `kind: status reason`. */
  failedOnce: string[];
  /** Requests that failed twice. */
  lost: string[];
  /** Ids of the tokens created. */
  created: string[];
  finished: { at: number; ok: boolean }[];
  /** /me answers that named someone else. */
  wrongUser: number;
}

type Job = { kind: 'me' } | { kind: 'token'; name: string };

export async function burst(o: BurstOptions): Promise<BurstResult> {
  const jobs: Job[] = [];
  const total = o.gets + o.tokens;
  // Token creations spread evenly among the GETs.
  for (let i = 0; i < total; i++) {
    const tokensSoFar = Math.floor((i * o.tokens) / total);
    const tokensNext = Math.floor(((i + 1) * o.tokens) / total);
    jobs.push(tokensNext > tokensSoFar ? { kind: 'token', name: `${o.tokenPrefix}-${i}` } : { kind: 'me' });
  }
  const r: BurstResult = { requests: jobs.length, seconds: 0, failedOnce: [], lost: [], created: [], finished: [], wrongUser: 0 };
  const attempt = async (agent: Agent, job: Job): Promise<string | undefined> => {
    const a =
      job.kind === 'me'
        ? await call(o.base, agent, 'GET', '/api/v1/me', o.token)
        : await call(o.base, agent, 'POST', '/api/v1/tokens', o.token, { name: job.name });
    if (job.kind === 'me' && a.status === 200) {
      if ((JSON.parse(a.body!) as { name: string }).name !== o.user) r.wrongUser++;
      return undefined;
    }
    if (job.kind === 'token' && a.status === 201) {
      r.created.push((JSON.parse(a.body!) as { id: string }).id);
      return undefined;
    }
    return `${job.kind}: ${a.status ?? ''} ${a.error ?? a.body ?? ''}`.trim();
  };
  let next = 0;
  const started = Date.now();
  const client = async () => {
    const agent = new Agent({ ca: o.ca, keepAlive: true, maxSockets: 2 });
    try {
      while (next < jobs.length) {
        const job = jobs[next++]!;
        let why = await attempt(agent, job);
        if (why !== undefined) {
          r.failedOnce.push(why);
          // The one retry a client makes, on a new connection (the failed one may be the dying pod's).
          const fresh = new Agent({ ca: o.ca });
          why = await attempt(fresh, job);
          fresh.destroy();
          if (why !== undefined) r.lost.push(why);
        }
        r.finished.push({ at: Date.now(), ok: why === undefined });
        await new Promise((res) => setTimeout(res, o.pauseMs));
      }
    } finally {
      agent.destroy();
    }
  };
  await Promise.all(Array.from({ length: o.clients }, client));
  r.seconds = (Date.now() - started) / 1000;
  return r;
}

/** One line of figures for the test's output. */
export function describeBurst(r: BurstResult): string {
  return (
    `${r.requests} requests in ${r.seconds.toFixed(1)} s, ${r.failedOnce.length - r.lost.length} failed once and succeeded on retry, ` +
    `${r.lost.length} lost` +
    (r.failedOnce.length ? `; first failures: ${r.failedOnce.slice(0, 5).join(' | ')}` : '') +
    (r.lost.length ? `; lost: ${r.lost.slice(0, 5).join(' | ')}` : '')
  );
}
