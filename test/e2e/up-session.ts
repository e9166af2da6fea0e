/**
 * `devtool up` as the dev-container tests run it: without a terminal, in the background, as a
 * developer's second terminal would. Ready is what `up` prints once the dev pod runs, the first
 * sync is done and the forwards listen.
 */
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { runDevtool, spawnDevtool } from './cli.ts';
import { deleteNamespace, type ClusterSandbox } from './cluster.ts';

const READY = 'Forwarding until interrupted';

export interface UpSession {
  proc: ChildProcessWithoutNullStreams;
  /** What up printed on stdout so far. */
  stdout(): string;
  /** Its stdout and stderr, interleaved as they came. */
  output(): string;
  /** SIGTERM, as Ctrl-C would, and its exit. */
  stop(): Promise<void>;
}

/** Every `up` started here, for an `after` hook to kill whatever a failed test left running. */
const started: ChildProcessWithoutNullStreams[] = [];

export function killUpSessions(): void {
  for (const p of started) if (p.exitCode === null) p.kill('SIGKILL');
}

/** Starts `devtool up ARGS` and resolves once it is ready; rejects with its output if it exits or takes over `timeoutMs`. */
export function startUp(args: readonly string[], opts: { env: NodeJS.ProcessEnv; cwd: string; detached?: boolean }, timeoutMs = 240_000): Promise<UpSession> {
  const proc = spawnDevtool(['up', ...args], opts);
  started.push(proc);
  let stdout = '';
  let output = '';
  proc.stdout.on('data', (c: Buffer) => {
    stdout += c.toString();
    output += c.toString();
  });
  proc.stderr.on('data', (c: Buffer) => {
    output += c.toString();
  });
  const session: UpSession = {
    proc,
    stdout: () => stdout,
    output: () => output,
    stop: async () => {
      if (proc.exitCode !== null) return;
      proc.kill('SIGTERM');
      await new Promise((r) => (proc.exitCode !== null ? r(null) : proc.once('exit', r)));
    },
  };
  return new Promise((resolve, reject) => {
    const done = (err?: Error) => {
      clearInterval(check);
      clearTimeout(timer);
      if (err) reject(err);
      else resolve(session);
    };
    const timer = setTimeout(() => done(new Error(`up not ready in ${timeoutMs / 1000}s:\n${output}${logTail(opts.env)}`)), timeoutMs);
    proc.once('exit', (code) => done(new Error(`up exited ${code}:\n${output}${logTail(opts.env)}`)));
    const check = setInterval(() => {
      if (stdout.includes(READY)) done();
    }, 100);
  });
}

/** The end of devtool.log (CI keeps only a failure's text): where an `up` that never got ready was. */
function logTail(env: NodeJS.ProcessEnv): string {
  const log = join(env.DEVTOOL_HOME ?? '', 'devtool.log');
  if (!env.DEVTOOL_HOME || !existsSync(log)) return '';
  return `\n--- devtool.log, last lines:\n${readFileSync(log, 'utf8').split('\n').slice(-60).join('\n')}`;
}

/**
 * The `after` of a dev-container test file: stops the `up`s it started, gives back the dev
 * containers of `folders` (their volumes too), and drops its namespace.
 */
export async function tearDownDev(s: ClusterSandbox | undefined, env: NodeJS.ProcessEnv, folders: readonly string[]): Promise<void> {
  killUpSessions();
  if (!s) return;
  for (const cwd of folders) runDevtool(['down', '-n', s.namespace, '--volumes'], { env, cwd, timeoutMs: 120_000 });
  await deleteNamespace(s);
}
