/**
 * Commands run in this process, as a user runs them: `runCommand(['namespace', 'list'], ...)` goes
 * through runCli (parse, factory, the command's handler, the one-line error and the exit code),
 * with a Factory built from what the test gives:
 * - a sandbox (`commandSandbox`): a temporary HOME, DEVTOOL_HOME and KUBECONFIG (the fixture with
 *   the fake clusters alpha and beta: nothing is contacted), an environment carrying nothing of the
 *   user running the tests, and a project folder as the working directory;
 * - a fixed clock, captured stdout and stderr, and no terminal unless the test asks for one (then
 *   with a scripted Prompter: `answers`);
 * - the clients of outside systems: `service`, the real service program in this process
 *   (test/in-process-service.ts), and `kube`, a Kubernetes client of only the members the
 *   command's domain code uses (`fakeKubeClient`); a command that reaches for a client the test did
 *   not give fails, so no test talks to a real cluster or service by accident;
 * - or, for a command whose domain code takes a narrow view of the cluster (`IngressReader`,
 *   `RestartApi`, `DeactivateApi`, `DestroyApi`), `handler`: the command's handler made with an
 *   in-memory view (`restartHandler(async () => view)`), in place of the one built from `f.kube`.
 * `createTestFactory` gives the same Factory to a test that calls domain code or a handler itself.
 * The clients reach the Factory through FactoryOptions.clients; without them it makes the real ones.
 *
 *   const sandbox = commandSandbox();
 *   await logIn(sandbox, service, service.alice);               // test/in-process-service.ts
 *   const r = await runCommand(['namespace', 'create', 'x'], { sandbox, service: service.client });
 *   assert.equal(r.stdout, ...);  failure(r, ExitCode.usage);    // the one stderr line, returned
 *
 * The clock stands still unless a test passes `now`: a wait whose deadline reads it needs one that moves.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { runCli } from '../src/cli/run.ts';
import type { CommandHandler, CommandSpec, OptionSpec } from '../src/cli/spec.ts';
import { rootCommand } from '../src/commands/index.ts';
import { createFactory, type Factory, type FactoryOptions } from '../src/factory.ts';
import type { Choice, Prompter } from '../src/io/prompt.ts';
import type { KubeClient } from '../src/kube/client.ts';
import type { KubeTarget } from '../src/kube/target.ts';

const repoRoot = fileURLToPath(new URL('..', import.meta.url));

/** The fixture kubeconfig: contexts alpha (current, namespace default) and beta (namespace team) on fake servers. */
export const FIXTURE_KUBECONFIG = readFileSync(join(repoRoot, 'src/context/testdata/two-clusters.kubeconfig.yaml'), 'utf8');

/** The clock every test factory reads unless told another. */
export const TEST_NOW = new Date('2026-01-01T00:00:00Z');

export interface CommandSandbox {
  root: string;
  /** HOME (never the real one). */
  home: string;
  /** DEVTOOL_HOME: contexts.json, analytics, devtool.log. */
  devtoolHome: string;
  /** The kubeconfig file (KUBECONFIG). */
  kubeconfig: string;
  /** An empty folder, the working directory of the commands run in this sandbox. */
  project: string;
  env: NodeJS.ProcessEnv;
}

const sandboxes: string[] = [];
process.on('exit', () => {
  for (const dir of sandboxes) rmSync(dir, { recursive: true, force: true });
});

export function commandSandbox(kubeconfig = FIXTURE_KUBECONFIG): CommandSandbox {
  const root = mkdtempSync(join(tmpdir(), 'devtool-command-'));
  sandboxes.push(root);
  const home = join(root, 'home');
  const project = join(root, 'project');
  const kc = join(root, 'kubeconfig.yaml');
  mkdirSync(home);
  mkdirSync(project);
  writeFileSync(kc, kubeconfig, { mode: 0o600 });
  const devtoolHome = join(root, 'devtool-home');
  return { root, home, devtoolHome, kubeconfig: kc, project, env: { HOME: home, DEVTOOL_HOME: devtoolHome, KUBECONFIG: kc, TZ: 'UTC' } };
}

export interface TestFactoryOptions {
  /** Default: a new sandbox. */
  sandbox?: CommandSandbox;
  /** Added to the sandbox's environment. */
  env?: NodeJS.ProcessEnv;
  /** Default: the sandbox's project folder. */
  cwd?: string;
  now?: () => Date;
  /** The Kubernetes client of a target; default: none (a command that asks fails). */
  kube?: Factory['kube'];
  /** The devtool service's client; default: none (a command that asks fails). */
  service?: Factory['service'];
  /** Stdin and stdout are terminals, and prompts are answered from `answers`, in order. */
  terminal?: boolean;
  answers?: readonly string[];
}

export interface CommandResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** A Factory as runCli makes it, plus what the command wrote. */
export function createTestFactory(o: TestFactoryOptions = {}): { f: Factory; stdout: () => string; stderr: () => string; sandbox: CommandSandbox } {
  const { options, stdout, stderr, sandbox } = factoryOptions(o);
  return { f: createFactory(options), stdout, stderr, sandbox };
}

export interface RunCommandOptions<Options extends readonly OptionSpec[]> extends TestFactoryOptions {
  /**
   * Runs instead of the handler the command's spec loads: the command's own handler made with a
   * test's in-memory view of the cluster (e.g. `restartHandler(async () => view)` of
   * commands/restart/run.ts). Parsing, the one-line error and the exit code stay runCli's.
   */
  handler?: CommandHandler<Options>;
}

/** `devtool ...args` in this process: its exit code and what it wrote. */
export async function runCommand<Options extends readonly OptionSpec[]>(args: readonly string[], o: RunCommandOptions<Options> = {}): Promise<CommandResult> {
  const { options, stdout, stderr } = factoryOptions(o);
  const code = await runCli(args, o.handler ? withHandler(args[0], o.handler) : rootCommand, options);
  return { code, stdout: stdout(), stderr: stderr() };
}

/** The command tree, with `handler` in place of the one the top-level command `name` loads. */
function withHandler<Options extends readonly OptionSpec[]>(name: string | undefined, handler: CommandHandler<Options>): CommandSpec {
  const subcommands = rootCommand.subcommands ?? [];
  assert.ok(
    subcommands.some((c) => c.name === name && c.load),
    `a handler was given, but devtool has no command ${name} that runs one`,
  );
  // The handler is typed by its command's options, as command() checks for the one it replaces.
  const load = async () => handler as unknown as CommandHandler<readonly OptionSpec[]>;
  return { ...rootCommand, subcommands: subcommands.map((c) => (c.name === name ? { ...c, load } : c)) };
}

function factoryOptions(o: TestFactoryOptions) {
  const sandbox = o.sandbox ?? commandSandbox();
  const out = captured(o.terminal);
  const err = captured(o.terminal);
  const stdin = Object.assign(new PassThrough(), { isTTY: o.terminal ?? false });
  stdin.end();
  const options: FactoryOptions = {
    io: { stdin, stdout: out.stream, stderr: err.stream },
    env: { ...sandbox.env, ...o.env },
    cwd: o.cwd ?? sandbox.project,
    now: o.now ?? (() => TEST_NOW),
    ...(o.terminal ? { prompter: scriptedPrompter(o.answers ?? []) } : {}),
    clients: {
      kube: o.kube ?? (async ({ context }: KubeTarget) => assert.fail(`the command asked for a Kubernetes client of ${context.name}; the test gave none`)),
      service: o.service ?? (async ({ url }) => assert.fail(`the command asked for a client of the service ${url}; the test gave none`)),
    },
  };
  return { options, stdout: out.text, stderr: err.text, sandbox };
}

function captured(terminal: boolean | undefined) {
  const stream = Object.assign(new PassThrough(), { isTTY: terminal ?? false, columns: 120 });
  let text = '';
  stream.on('data', (c: Buffer) => (text += c.toString()));
  return { stream, text: () => text };
}

/** Answers prompts in order; a select's answer is a choice's value, a confirm's "yes" or "no". */
export function scriptedPrompter(answers: readonly string[]): Prompter & { asked: string[] } {
  const queue = [...answers];
  const asked: string[] = [];
  const next = (message: string) => {
    asked.push(message);
    const answer = queue.shift();
    if (answer === undefined) assert.fail(`unexpected prompt: ${message}`);
    return answer;
  };
  return {
    asked,
    async select(message: string, choices: readonly Choice[]) {
      const answer = next(message);
      assert.ok(
        choices.some((c) => c.value === answer),
        `${message}: no choice ${answer} in ${choices.map((c) => c.value).join(', ')}`,
      );
      return answer;
    },
    async input(message: string, _instead: string, validate?: (value: string) => string | true) {
      const answer = next(message);
      const valid = validate?.(answer) ?? true;
      if (valid !== true) assert.fail(`${message}: ${answer} refused: ${valid}`);
      return answer;
    },
    async confirm(message: string) {
      return next(message) === 'yes';
    },
  };
}

/** Asserts a failure as a user sees it: the exit code and exactly one line on stderr, which is returned. */
export function failure(r: CommandResult, code: number): string {
  assert.equal(r.code, code, `exit ${r.code}, stdout: ${r.stdout}, stderr: ${r.stderr}`);
  const lines = r.stderr.split('\n').filter(Boolean);
  assert.equal(lines.length, 1, `one stderr line, got: ${JSON.stringify(r.stderr)}`);
  assert.match(lines[0]!, /^Error: /);
  return lines[0]!;
}

/** Asserts success (exit 0) and returns the result. */
export function success(r: CommandResult): CommandResult {
  assert.equal(r.code, 0, `exit ${r.code}, stdout: ${r.stdout}, stderr: ${r.stderr}`);
  return r;
}

/**
 * A KubeClient of the members given (the narrow APIs a command's domain code calls, e.g.
 * `{ apps: { readNamespacedDeployment } }`), for a target's context and namespace; reading any
 * other member fails the test, naming it.
 */
export function fakeKubeClient(target: KubeTarget, members: Record<string, unknown>): KubeClient {
  const given: Record<string, unknown> = { context: target.context, namespace: target.namespace ?? target.context.namespace, ...members };
  return new Proxy(given, {
    get(object, key) {
      if (typeof key !== 'string' || key === 'then') return undefined;
      if (key in object) return object[key];
      return assert.fail(`the command read KubeClient.${key}, which the test's fake does not have`);
    },
  }) as unknown as KubeClient;
}
