// The test git server's program (scripts/git-server.sh deploys it): Git's smart HTTP protocol for
// the bare repositories under $GIT_ROOT, served by `git http-backend` (a CGI program, Debian's git)
// behind this small HTTP server. Plain HTTP on $PORT: TLS ends at the front door's Ingress.
// Read-only (clone and fetch; repositories are made with `git-server.sh repo`). A repository with a
// file `devtool-token` in it is private: HTTP basic auth whose password is that token, any user name,
// as GitHub and GitLab take a personal access token.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';

const ROOT = process.env.GIT_ROOT ?? '/srv/git';
const PORT = Number(process.env.PORT ?? 8080);

/** The token of a private repository, or undefined for a public one (or none by that name). */
function tokenOf(repo) {
  const file = join(ROOT, repo, 'devtool-token');
  return existsSync(file) ? readFileSync(file, 'utf8').trim() : undefined;
}

function passwordOf(header) {
  const m = /^Basic\s+(\S+)$/i.exec(header ?? '');
  if (!m) return undefined;
  const decoded = Buffer.from(m[1], 'base64').toString('utf8');
  return decoded.slice(decoded.indexOf(':') + 1);
}

const server = createServer((req, res) => {
  const url = new URL(req.url ?? '/', 'http://git');
  if (url.pathname === '/healthz') return res.end('ok\n');
  const repo = /^\/([A-Za-z0-9._-]+\.git)(\/|$)/.exec(url.pathname)?.[1];
  if (!repo || repo.startsWith('.') || !existsSync(join(ROOT, repo))) {
    res.writeHead(404).end('no such repository\n');
    return;
  }
  const token = tokenOf(repo);
  if (token !== undefined && passwordOf(req.headers.authorization) !== token) {
    res.writeHead(401, { 'www-authenticate': 'Basic realm="git"' }).end('authentication required\n');
    console.log(`${req.method} ${url.pathname} 401`);
    return;
  }
  const env = {
    PATH: process.env.PATH,
    GIT_PROJECT_ROOT: ROOT,
    GIT_HTTP_EXPORT_ALL: '1',
    GATEWAY_INTERFACE: 'CGI/1.1',
    REQUEST_METHOD: req.method,
    PATH_INFO: decodeURIComponent(url.pathname),
    QUERY_STRING: url.search.slice(1),
    CONTENT_TYPE: req.headers['content-type'] ?? '',
    REMOTE_ADDR: req.socket.remoteAddress ?? '',
    ...(token !== undefined ? { REMOTE_USER: 'token' } : {}),
    ...(req.headers['content-encoding'] ? { HTTP_CONTENT_ENCODING: req.headers['content-encoding'] } : {}),
    ...(req.headers['git-protocol'] ? { GIT_PROTOCOL: req.headers['git-protocol'] } : {}),
  };
  const cgi = spawn('git', ['http-backend'], { env, stdio: ['pipe', 'pipe', 'inherit'] });
  req.pipe(cgi.stdin);
  // The CGI answer: header lines, a blank line, then the body, streamed as it comes.
  let head = Buffer.alloc(0);
  let started = false;
  cgi.stdout.on('data', (chunk) => {
    if (started) return void res.write(chunk);
    head = Buffer.concat([head, chunk]);
    const end = head.indexOf('\r\n\r\n') >= 0 ? head.indexOf('\r\n\r\n') + 4 : head.indexOf('\n\n') >= 0 ? head.indexOf('\n\n') + 2 : -1;
    if (end < 0) return;
    let status = 200;
    const headers = {};
    for (const line of head.subarray(0, end).toString('latin1').split(/\r?\n/)) {
      const i = line.indexOf(':');
      if (i <= 0) continue;
      const name = line.slice(0, i).trim();
      const value = line.slice(i + 1).trim();
      if (name.toLowerCase() === 'status') status = Number.parseInt(value, 10);
      else headers[name] = value;
    }
    res.writeHead(status, headers);
    started = true;
    res.write(head.subarray(end));
    console.log(`${req.method} ${url.pathname} ${status}`);
  });
  cgi.on('close', (code) => {
    if (!started) res.writeHead(502).end(`git http-backend exited ${code}\n`);
    else res.end();
  });
});
server.listen(PORT, () => console.log(`git server on :${PORT}, repositories in ${ROOT}`));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
