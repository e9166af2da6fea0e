/**
 * A dashboard page's stream of server-sent events, as the live script reads them (`section`,
 * `append`, `end`): opened on a hijacked reply, kept alive by comments, ended when the viewer's
 * session or token ends, when the page goes, or when the page falls behind (more than MAX_UNSENT
 * bytes unsent: the caller checks `behind()` after writing).
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { HEARTBEAT_MS, MAX_UNSENT, SESSION_RECHECK_MS } from './dashboard-events.ts';
import type { Viewer } from './dashboard-viewer.ts';

export interface EventStream {
  send(event: 'section' | 'append', value: { id: string; html: string }): void;
  /** Ends the stream, telling the page why when there is a reason. */
  end(reason?: string): void;
  /** More unsent than a page may hold. */
  behind(): boolean;
  readonly ended: boolean;
}

/** Opens the stream; `onEnd` runs once when it ends, whoever ends it. */
export function openEventStream(request: FastifyRequest, reply: FastifyReply, v: Viewer, onEnd: () => void): EventStream {
  const res = reply.raw;
  const timers: NodeJS.Timeout[] = [];
  const stream: EventStream = {
    ended: false,
    send(event, value) {
      if (!stream.ended) res.write(`event: ${event}\ndata: ${JSON.stringify(value)}\n\n`);
    },
    end(reason) {
      if (stream.ended) return;
      (stream as { ended: boolean }).ended = true;
      for (const t of timers) clearInterval(t);
      onEnd();
      if (reason) res.write(`event: end\ndata: ${reason}\n\n`);
      res.end();
    },
    behind: () => res.writableLength > MAX_UNSENT,
  };
  reply.hijack();
  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-store',
    'x-accel-buffering': 'no',
    connection: 'keep-alive',
  });
  res.write('retry: 3000\n\n');
  request.raw.on('close', () => stream.end());
  res.on('error', () => stream.end());
  timers.push(setInterval(() => res.write(': keep-alive\n\n'), HEARTBEAT_MS));
  timers.push(
    setInterval(() => {
      void v.stillValid().then((ok) => {
        if (!ok) stream.end('you are signed out: sign in again');
      });
    }, SESSION_RECHECK_MS),
  );
  return stream;
}
