/**
 * The devtool service program as the tests run it: the built `dist/devtool-service.cjs`, `serve`
 * on a free loopback port, and its operator command `create-user`.
 */
import { spawn, spawnSync } from 'node:child_process';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { ensureBuilt, repoRoot } from './cli.ts';

export const servicePath = join(repoRoot, 'dist', 'devtool-service.cjs');

export interface RunningService {
  url: string;
  /** Everything it printed so far (its JSON log lines). */
  output(): string;
  /** SIGTERM; resolves to its exit code. */
  stop(): Promise<number | null>;
}

/** Starts `serve` with `env` (POD_NAMESPACE, KUBECONFIG...) and waits until /readyz answers 200. */
export async function startService(env: Record<string, string>): Promise<RunningService> {
  ensureBuilt();
  const port = await freePort();
  const child = spawn(process.execPath, [servicePath, 'serve'], {
    env: { ...process.env, HOST: '127.0.0.1', ...env, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (c: Buffer) => (output += c));
  child.stderr.on('data', (c: Buffer) => (output += c));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    const status = await fetch(`${url}/readyz`).then(
      (r) => r.status,
      () => 0,
    );
    if (status === 200) break;
    if (i >= 100 || child.exitCode !== null) {
      child.kill('SIGKILL');
      throw new Error(`devtool-service serve not ready after 10 s: ${output}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url,
    output: () => output,
    stop: () => {
      child.kill('SIGTERM');
      return exited;
    },
  };
}

/** `create-user NAME [--admin]`; the result's `token` is its last output line. */
export function createUser(env: Record<string, string>, name: string, admin = false) {
  ensureBuilt();
  const r = spawnSync(process.execPath, [servicePath, 'create-user', name, ...(admin ? ['--admin'] : [])], {
    env: { ...process.env, ...env },
    encoding: 'utf8',
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr, token: r.stdout.trim().split('\n').pop() ?? '' };
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}
