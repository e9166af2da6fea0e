/**
 * The browser login's redirect target (RFC 8252, loopback interface redirection): a one-shot HTTP
 * server on 127.0.0.1 and a port the system picks, which waits for the service to send the browser
 * back with `?code=...&state=...`. A request whose `state` is not ours is answered 400 and ignored
 * (another page may probe the port); an `error` the service sends back ends the wait with its
 * description. The browser is then sent on to `doneUrl` (the service's own page saying the login
 * worked), or shown a short page when there is none.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { formatDuration } from '../../base/duration.ts';
import { DevtoolError } from '../../base/errors.ts';

export const CALLBACK_PATH = '/callback';

export interface LoopbackReceiver {
  /** What to send as `redirect_uri`, e.g. http://127.0.0.1:43117/callback. */
  readonly redirectUri: string;
  /** The authorization code, once the browser comes back with it. */
  readonly code: Promise<string>;
  /** Stops listening (the code promise, if still waiting, fails). */
  close(): void;
}

export interface LoopbackOptions {
  readonly state: string;
  /** How long to wait for the browser; the message then names the way without a browser. */
  readonly timeoutMs: number;
  /** Where to send the browser once the code arrived (a page of the service). */
  readonly doneUrl?: (outcome: 'signed-in' | 'refused') => string | undefined;
}

export async function listenForAuthorizationCode(o: LoopbackOptions): Promise<LoopbackReceiver> {
  let settle: { resolve(code: string): void; reject(err: Error): void } | undefined;
  const code = new Promise<string>((resolve, reject) => {
    settle = { resolve, reject };
  });
  // Nobody may await `code` when the receiver is closed early; the rejection must not crash node.
  code.catch(() => {});
  const server = createServer((req, res) => handle(req, res));
  const timer = setTimeout(
    () => finish(new DevtoolError(`no answer from the browser after ${formatDuration(o.timeoutMs)}; log in without a browser with --token or DEVTOOL_TOKEN`)),
    o.timeoutMs,
  );
  timer.unref();

  function finish(outcome: string | Error): void {
    clearTimeout(timer);
    server.close();
    server.closeIdleConnections();
    if (typeof outcome === 'string') settle?.resolve(outcome);
    else settle?.reject(outcome);
  }

  function handle(req: IncomingMessage, res: ServerResponse): void {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (req.method !== 'GET' || url.pathname !== CALLBACK_PATH) {
      page(res, 404, 'Not found.');
      return;
    }
    if (url.searchParams.get('state') !== o.state) {
      page(res, 400, 'This sign-in link is not the one devtool is waiting for. Start again from the terminal.');
      return;
    }
    const error = url.searchParams.get('error');
    if (error) {
      redirectOrPage(res, 'refused', 'Sign-in was refused. You can close this tab.');
      finish(new DevtoolError(`the service refused the sign-in: ${url.searchParams.get('error_description') || error}`));
      return;
    }
    const received = url.searchParams.get('code');
    if (!received) {
      page(res, 400, 'The sign-in answer has no code. Start again from the terminal.');
      return;
    }
    redirectOrPage(res, 'signed-in', 'Signed in. You can close this tab and go back to the terminal.');
    finish(received);
  }

  function redirectOrPage(res: ServerResponse, outcome: 'signed-in' | 'refused', text: string): void {
    const target = o.doneUrl?.(outcome);
    if (target) {
      res.writeHead(303, { Location: target, Connection: 'close' }).end();
      return;
    }
    page(res, 200, text);
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    redirectUri: `http://127.0.0.1:${port}${CALLBACK_PATH}`,
    code,
    close: () => finish(new DevtoolError('the login was cancelled')),
  };
}

function page(res: ServerResponse, status: number, text: string): void {
  res.writeHead(status, { 'Content-Type': 'text/html; charset=utf-8', Connection: 'close' });
  res.end(`<!doctype html><meta charset="utf-8"><title>devtool</title><p>${text}</p>\n`);
}
