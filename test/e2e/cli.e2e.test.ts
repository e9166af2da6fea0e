/**
 * The built CLI, run as a process with a temporary HOME, DEVTOOL_HOME and KUBECONFIG: the command
 * surface, contexts, namespaces, kubeconfig, analytics, logging, errors and exit codes.
 * Nothing here needs a cluster or the network: the kubeconfig fixture points at fake servers.
 */
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { delimiter, dirname, join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { ExitCode } from '../../src/base/errors.ts';
import { globalOptions, visibleCommands } from '../../src/cli/spec.ts';
import { rootCommand } from '../../src/commands/index.ts';
import { cliPath, createSandbox, ensureBuilt, FIXTURE_KUBECONFIG, lines, repoRoot, runDevtool, spawnDevtool, type RunResult, type Sandbox } from './cli.ts';

const pkg = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { version: string };
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

before(() => ensureBuilt());

/** Runs devtool in a sandbox. */
const run = (sb: Sandbox, args: string[], env: NodeJS.ProcessEnv = {}, input?: string) =>
  runDevtool(args, { env: { ...sb.env, ...env }, ...(input !== undefined ? { input } : {}) });

function ok(r: RunResult, what: string): RunResult {
  assert.equal(r.code, 0, `${what}: exit ${r.code}, stderr: ${r.stderr}`);
  return r;
}

/** A failure: the exit code, and exactly one line on stderr, which is returned. */
function fails(r: RunResult, code: number, what: string): string {
  assert.equal(r.timedOut, false, `${what}: timed out`);
  assert.equal(r.code, code, `${what}: exit ${r.code}, stdout: ${r.stdout}, stderr: ${r.stderr}`);
  const errLines = lines(r.stderr);
  assert.equal(errLines.length, 1, `${what}: one stderr line, got: ${JSON.stringify(r.stderr)}`);
  assert.match(errLines[0]!, /^Error: /);
  return errLines[0]!;
}

interface Row {
  name: string;
  current: boolean;
  namespace: string;
  builder: string;
  registry: string;
}

function contextRows(stdout: string): Row[] {
  const [header, ...rows] = lines(stdout);
  assert.deepEqual(header!.split(/\s{3,}/), ['Name', 'Namespace', 'Builder', 'Registry']);
  return rows.map((line) => {
    const [name, namespace, builder, registry] = line.split(/\s{3,}/);
    return { name: name!.replace(/ \*$/, ''), current: name!.endsWith(' *'), namespace: namespace!, builder: builder!, registry: registry! };
  });
}

function showContext(sb: Sandbox, env: NodeJS.ProcessEnv = {}): Record<string, unknown> {
  const r = ok(run(sb, ['context', 'show'], env), 'context show');
  assert.equal(r.stderr, '');
  return JSON.parse(r.stdout) as Record<string, unknown>;
}

const allCommands = () => visibleCommands(rootCommand);

function spoolRecords(sb: Sandbox): Record<string, unknown>[] {
  const file = join(sb.devtoolHome, 'analytics-spool.jsonl');
  if (!existsSync(file)) return [];
  return lines(readFileSync(file, 'utf8')).map((l) => JSON.parse(l) as Record<string, unknown>);
}

describe('help and version', () => {
  test("every command's and subcommand's --help exits 0 and lists each of its options", () => {
    const sb = createSandbox();
    const commands = allCommands();
    assert.ok(commands.length >= 30);
    for (const { path, spec } of commands) {
      const r = run(sb, [...path, '--help']);
      const what = `devtool ${path.join(' ')} --help`;
      assert.equal(r.code, 0, `${what}: ${r.stderr}`);
      assert.equal(r.stderr, '', what);
      assert.match(r.stdout, new RegExp(`^Usage:\\n  devtool ${path.join(' ')}( |\\n)`, 'm'), what);
      for (const o of [...(spec.options ?? []), ...globalOptions]) {
        if (o.hidden) continue;
        assert.match(r.stdout, new RegExp(`--${o.name} ${o.type} `), `${what}: --${o.name}`);
      }
      for (const line of r.stdout.split('\n').filter((l) => /^ +(-\w, )?--/.test(l))) {
        assert.ok((line.match(/\(default: /g) ?? []).length <= 1, `${what}: one default per option: ${line}`);
      }
      for (const sub of spec.subcommands ?? []) assert.match(r.stdout, new RegExp(`^  ${sub.name} `, 'm'), `${what}: ${sub.name}`);
    }
    // -h works too, and before the command.
    assert.equal(run(sb, ['-h', 'deploy']).stdout, run(sb, ['deploy', '--help']).stdout);
    assert.equal(run(sb, ['context', 'use', '-h']).stdout, run(sb, ['context', 'use', '--help']).stdout);
    // deploy is no pipeline: its options say what they do to a deploy.
    const deployHelp = run(sb, ['deploy', '--help']).stdout;
    assert.doesNotMatch(deployHelp, /pipeline/i);
    assert.match(deployHelp, /--wait bool +Wait until the deployed workloads are ready/);
    // Help never records analytics or needs a context.
    assert.deepEqual(spoolRecords(sb), []);
  });

  test('`devtool help` prints the help of every command and subcommand', () => {
    const r = ok(runDevtool(['help']), 'help');
    for (const c of rootCommand.subcommands ?? []) {
      if (c.hidden) assert.doesNotMatch(r.stdout, new RegExp(`^  ${c.name} +\\S`, 'm'), `${c.name} is hidden`);
      else assert.match(r.stdout, new RegExp(`^  ${c.name} +\\S`, 'm'), c.name);
    }
    for (const { path } of allCommands()) assert.ok(r.stdout.includes(`======== devtool ${path.join(' ')} ========\n`), path.join(' '));
    assert.ok(r.stdout.includes('--skip-if-exists bool'));
    const one = ok(runDevtool(['help', 'context', 'use']), 'help context use');
    assert.equal(one.stdout, ok(runDevtool(['context', 'use', '--help']), 'context use --help').stdout);
    assert.match(fails(runDevtool(['help', 'nope']), ExitCode.usage, 'help nope'), /unknown command "nope"/);
  });

  test('devtool alone prints the command list and exits 0', () => {
    const plain = ok(runDevtool([]), 'devtool');
    assert.match(plain.stdout, /^Commands:$/m);
    assert.match(plain.stdout, /^ {2}version +Display the installed version$/m);
    assert.equal(ok(runDevtool(['--help']), '--help').stdout, plain.stdout);
    assert.equal(ok(runDevtool(['--loglevel', 'error']), '--loglevel error').stdout, plain.stdout);
    assert.equal(ok(runDevtool(['--loglevel=error']), '--loglevel=error').stdout, plain.stdout);
  });

  test('`devtool version` prints the package version', () => {
    const r = ok(runDevtool(['version']), 'version');
    assert.equal(r.stdout, `devtool version ${pkg.version}\n`);
    assert.equal(r.stderr, '');
  });

  test('the bundles load one another and yaml with require(): an import() would start the ES module loader (~12 ms a command)', () => {
    const dist = dirname(cliPath);
    const bundles = [
      cliPath,
      join(dist, 'service-client.cjs'),
      ...readdirSync(join(dist, 'commands'))
        .filter((f) => f.endsWith('.cjs'))
        .map((f) => join(dist, 'commands', f)),
    ];
    assert.ok(bundles.length > 10, bundles.join(' '));
    for (const file of bundles) assert.doesNotMatch(readFileSync(file, 'utf8'), /\bimport\(\s*["'](\.{1,2}\/|node:|yaml["'])/, file);
    assert.match(readFileSync(cliPath, 'utf8'), /require\("\.\/commands\/namespace\.cjs"\)/);
  });

  test('@kubernetes/client-node is required from its one minified bundle, never loaded as ~1,500 ES modules from node_modules', () => {
    const dist = dirname(cliPath);
    const commands = readdirSync(join(dist, 'commands')).filter((f) => f.endsWith('.cjs'));
    for (const file of [cliPath, ...commands.map((f) => join(dist, 'commands', f))])
      assert.doesNotMatch(readFileSync(file, 'utf8'), /(require|import)\(\s*["']@kubernetes\/client-node["']\)/, file);
    assert.match(readFileSync(join(dist, 'commands', 'up.cjs'), 'utf8'), /require\("\.\.\/kube-client\.cjs"\)/);
    const loaded = spawnSync(process.execPath, ['-e', `process.stdout.write(typeof require(${JSON.stringify(join(dist, 'kube-client.cjs'))}).KubeConfig)`], {
      encoding: 'utf8',
    });
    assert.equal(loaded.stdout, 'function', loaded.stderr);
  });

  test('`devtool completion` prints scripts that parse', () => {
    const bash = ok(runDevtool(['completion', 'bash']), 'completion bash');
    assert.equal(spawnSync('bash', ['-n'], { input: bash.stdout }).status, 0);
    assert.match(bash.stdout, /complete -o default -F _devtool devtool/);
    assert.match(ok(runDevtool(['completion', 'zsh']), 'completion zsh').stdout, /^#compdef devtool/);
    assert.match(fails(runDevtool(['completion', 'fish']), ExitCode.usage, 'completion fish'), /unsupported shell "fish".*expected bash or zsh/);
  });
});

describe('contexts', () => {
  test('`context show` is JSON with exactly the documented fields and a redacted token', () => {
    const sb = createSandbox();
    const shown = showContext(sb);
    assert.deepEqual(Object.keys(shown).sort(), ['builder', 'isDevtool', 'name', 'namespace', 'registry', 'token']);
    assert.deepEqual(shown, { name: 'alpha', token: 'REDACTED', namespace: 'default', builder: 'docker', registry: '-', isDevtool: false });
    const all = run(sb, ['context', 'show']).stdout + readFileSync(join(sb.devtoolHome, 'devtool.log'), 'utf8');
    assert.equal(all.includes('fake-alpha-token'), false);
  });

  test('`context use <ctx> --namespace dev` prints one line, and `context list` marks it', () => {
    const sb = createSandbox();
    const before = contextRows(ok(run(sb, ['context', 'list']), 'context list').stdout);
    assert.deepEqual(
      before.map((r) => [r.name, r.current, r.namespace]),
      [
        ['alpha', true, 'default'],
        ['beta', false, 'team'],
      ],
    );

    const r = ok(run(sb, ['context', 'use', 'beta', '--namespace', 'dev']), 'context use');
    assert.equal(r.stderr, '');
    const out = lines(r.stdout);
    assert.equal(out.length, 1, r.stdout);
    assert.ok(out[0]!.includes('"dev"'), out[0]);
    assert.ok(out[0]!.includes('https://beta.invalid:6443'), out[0]);

    const rows = contextRows(ok(run(sb, ['context', 'list']), 'context list').stdout);
    assert.deepEqual(rows, [
      { name: 'alpha', current: false, namespace: 'default', builder: 'docker', registry: '-' },
      { name: 'beta', current: true, namespace: 'dev', builder: 'docker', registry: '-' },
    ]);
    assert.deepEqual(showContext(sb), { name: 'beta', token: 'REDACTED', namespace: 'dev', builder: 'docker', registry: '-', isDevtool: false });
    assert.equal(statSync(join(sb.devtoolHome, 'contexts.json')).mode & 0o777, 0o600);
  });

  test('`context use` stores builder and registry, and validates them', () => {
    const sb = createSandbox();
    ok(run(sb, ['context', 'use', 'alpha', '--builder', 'tcp://buildkit.local:1234', '--registry', 'localhost:5000']), 'context use');
    assert.deepEqual(contextRows(run(sb, ['context', 'list']).stdout)[0], {
      name: 'alpha',
      current: true,
      namespace: 'default',
      builder: 'tcp://buildkit.local:1234',
      registry: 'localhost:5000',
    });
    assert.match(fails(run(sb, ['context', 'use', 'alpha', '--builder', 'buildkit']), ExitCode.usage, 'bad builder'), /--builder/);
    assert.match(fails(run(sb, ['context', 'use', 'alpha', '--namespace', 'Not_Valid']), ExitCode.usage, 'bad namespace'), /invalid namespace "Not_Valid"/);
    assert.match(
      fails(run(sb, ['context', 'use', 'alpha', '--token', 'x']), ExitCode.usage, '--token on a cluster'),
      /--token is for devtool service contexts/,
    );
  });

  test('a service URL context: an unreachable service stores nothing; without a token it is stored and logging in fails clearly', () => {
    const sb = createSandbox();
    const secret = 'tok-SECRET-e2e-5d41402a';
    const contextsFile = join(sb.devtoolHome, 'contexts.json');
    // The token is checked with the service before anything is stored (a real service: service-context.e2e.test.ts).
    const r = run(sb, ['context', 'use', 'https://x.example', '--token', secret]);
    assert.match(fails(r, ExitCode.failure, 'context use URL --token, unreachable'), /^Error: cannot reach the devtool service at https:\/\/x\.example: /);
    // The --token=VALUE spelling is redacted too.
    run(sb, ['context', 'use', 'x.example', `--token=${secret}`]);
    assert.equal(existsSync(contextsFile) && readFileSync(contextsFile, 'utf8').includes('x.example'), false, 'nothing stored');

    // In CI no login is started: one line naming the ways without one.
    const inCi = run(sb, ['context', 'use', 'https://x.example'], { CI: 'true' });
    assert.match(fails(inCi, ExitCode.failure, 'context use URL in CI'), /never starts a login in CI: pass --token <API_TOKEN> or set DEVTOOL_URL/);
    // Elsewhere, without a terminal, the device-code login starts, and fails in one line on an unreachable service.
    const noToken = run(sb, ['context', 'use', 'https://x.example']);
    assert.match(fails(noToken, ExitCode.failure, 'context use URL'), /^Error: cannot log in to https:\/\/x\.example: cannot reach the devtool service/);
    assert.match(lines(noToken.stdout)[0] ?? '', /https:\/\/x\.example/);
    const list = run(sb, ['context', 'list']);
    const rows = contextRows(ok(list, 'context list').stdout);
    // A service context builds on its hosted builder, through the build tunnel.
    assert.deepEqual(rows.at(-1), {
      name: 'https://x.example',
      current: true,
      namespace: 'default',
      builder: 'https://x.example/api/v1/builds/tunnel',
      registry: '-',
    });
    assert.equal(rows.filter((row) => row.current).length, 1);
    const shown = showContext(sb);
    assert.deepEqual(shown, {
      name: 'https://x.example',
      token: '',
      namespace: 'default',
      builder: 'https://x.example/api/v1/builds/tunnel',
      registry: '-',
      isDevtool: true,
    });
    assert.equal(statSync(contextsFile).mode & 0o777, 0o600);

    const printed = [r.stdout, r.stderr, list.stdout, list.stderr, JSON.stringify(shown)].join('\n');
    assert.equal(printed.includes(secret), false, 'the token is never printed');
    const log = readFileSync(join(sb.devtoolHome, 'devtool.log'), 'utf8');
    assert.equal(log.includes(secret), false, 'the token is not in devtool.log');
    assert.match(log, /--token \*\*\*/);
    assert.match(log, /--token=\*\*\*/);
    assert.equal(readFileSync(join(sb.devtoolHome, 'analytics-spool.jsonl'), 'utf8').includes(secret), false);

    // Commands needing a logged-in user say so, in one line.
    assert.match(fails(run(sb, ['namespace', 'list']), ExitCode.unavailable, 'namespace list on a service context'), /requires a logged-in user/);
    assert.match(fails(run(sb, ['kubeconfig']), ExitCode.unavailable, 'kubeconfig on a service context'), /requires a logged-in user/);
  });

  test('`context delete` removes a stored context; the kubeconfig current-context applies again', () => {
    const sb = createSandbox();
    run(sb, ['context', 'use', 'https://x.example']);
    const r = ok(run(sb, ['context', 'delete', 'https://x.example']), 'context delete');
    assert.equal(r.stdout, 'Context "https://x.example" deleted\n');
    assert.deepEqual(
      contextRows(run(sb, ['context', 'list']).stdout).map((row) => [row.name, row.current]),
      [
        ['alpha', true],
        ['beta', false],
      ],
    );
    assert.equal(showContext(sb).name, 'alpha');
    assert.match(fails(run(sb, ['context', 'delete', 'https://x.example']), ExitCode.failure, 'delete twice'), /not found/);
    assert.match(fails(run(sb, ['context', 'delete', 'beta']), ExitCode.failure, 'delete a kubeconfig context'), /defined by .*kubeconfig\.yaml/);
  });

  test('DEVTOOL_URL and DEVTOOL_TOKEN select a service context for one run', () => {
    const sb = createSandbox();
    ok(run(sb, ['context', 'use', 'beta']), 'context use beta');
    const env = { DEVTOOL_URL: 'https://svc.example/', DEVTOOL_TOKEN: 'env-token-7' };
    const shown = showContext(sb, env);
    assert.deepEqual(shown, {
      name: 'https://svc.example',
      token: 'REDACTED',
      namespace: 'default',
      builder: 'https://svc.example/api/v1/builds/tunnel',
      registry: '-',
      isDevtool: true,
    });
    assert.equal(showContext(sb).name, 'beta', 'nothing was stored');
    assert.match(fails(run(sb, ['namespace', 'use', 'x'], env), ExitCode.failure, 'namespace use with DEVTOOL_URL'), /DEVTOOL_URL\/DEVTOOL_TOKEN/);
  });

  test('--context picks the cluster of a dev-container command for one run; an unknown one is a usage error naming the flag', () => {
    const sb = createSandbox();
    const project = join(sb.env.HOME!, 'project');
    mkdirSync(project);
    writeFileSync(join(project, 'devtool.yml'), 'services:\n  api:\n    sync: [".:/app"]\n');
    const run = (sb: Sandbox, args: string[]) => runDevtool(args, { env: sb.env, cwd: project });
    // The fixture's clusters do not exist: which one a command tried to reach shows which it chose.
    assert.match(fails(run(sb, ['down']), ExitCode.failure, 'down'), /alpha\.invalid.* namespace default\b/);
    assert.match(fails(run(sb, ['down', '--context', 'beta']), ExitCode.failure, 'down --context beta'), /beta\.invalid.* namespace team\b/);
    assert.match(fails(run(sb, ['restart', 'api', '-c', 'beta', '-n', 'n1']), ExitCode.failure, 'restart -c beta'), /beta\.invalid.* namespace n1\b/);
    assert.equal(showContext(sb).name, 'alpha', 'the current context is left as it was');
    assert.match(
      fails(run(sb, ['restart', '--context', 'gamma']), ExitCode.usage, 'restart --context gamma'),
      /--context: unknown context "gamma" \(known: alpha, beta\)/,
    );
  });
});

describe('namespaces and kubeconfig', () => {
  test('`namespace use` changes the namespace of the current context', () => {
    const sb = createSandbox();
    const r = ok(run(sb, ['namespace', 'use', 'other']), 'namespace use');
    assert.equal(lines(r.stdout).length, 1);
    assert.match(r.stdout, /"other".*alpha/);
    assert.equal(showContext(sb).namespace, 'other');
    assert.equal(contextRows(run(sb, ['context', 'list']).stdout).find((row) => row.name === 'alpha')!.namespace, 'other');
    assert.match(fails(run(sb, ['namespace', 'use', 'Bad_Name']), ExitCode.usage, 'bad namespace'), /invalid namespace "Bad_Name"/);
    assert.equal(showContext(sb).namespace, 'other');
  });

  test('create, delete and list need the devtool service: on a plain cluster they say so', () => {
    const sb = createSandbox();
    for (const args of [
      ['namespace', 'list'],
      ['namespace', 'create', 'feature'],
      ['namespace', 'delete', 'feature'],
    ]) {
      const line = fails(run(sb, args), ExitCode.unavailable, args.join(' '));
      assert.match(line, new RegExp(`'devtool ${args.slice(0, 2).join(' ')}' needs the devtool service.*"alpha" is a plain Kubernetes cluster`));
    }
  });

  test('`kubeconfig` writes the namespace into the kubeconfig, keeping every other entry', () => {
    const sb = createSandbox();
    ok(run(sb, ['context', 'use', 'beta', '--namespace', 'dev']), 'context use');
    const r = ok(run(sb, ['kubeconfig']), 'kubeconfig');
    assert.equal(r.stdout, `Updated context "beta" (namespace "dev") in ${sb.kubeconfig}\n`);
    const text = readFileSync(sb.kubeconfig, 'utf8');
    assert.match(text, /^# devtool e2e fixture/);
    const data = parseYaml(text);
    const fixture = parseYaml(FIXTURE_KUBECONFIG);
    assert.equal(data['current-context'], 'beta');
    assert.deepEqual(data.contexts, [fixture.contexts[0], { name: 'beta', context: { ...fixture.contexts[1].context, namespace: 'dev' } }]);
    assert.deepEqual(data.clusters, fixture.clusters);
    assert.deepEqual(data.users, fixture.users);
    assert.equal(statSync(sb.kubeconfig).mode & 0o777, 0o600);
  });

  test('`kubeconfig` with several KUBECONFIG files writes the defining file, current-context to the first', () => {
    const sb = createSandbox();
    const second = join(sb.root, 'second.yaml');
    writeFileSync(
      second,
      'apiVersion: v1\nkind: Config\nclusters:\n- name: gamma-cluster\n  cluster:\n    server: https://gamma.invalid\ncontexts:\n- name: gamma\n' +
        '  context:\n    cluster: gamma-cluster\n    user: gamma-user\nusers:\n- name: gamma-user\n  user:\n    token: fake-gamma\n',
      { mode: 0o644 },
    );
    const env = { KUBECONFIG: [sb.kubeconfig, second].join(delimiter) };
    assert.deepEqual(
      contextRows(ok(run(sb, ['context', 'list'], env), 'list').stdout).map((row) => row.name),
      ['alpha', 'beta', 'gamma'],
    );
    ok(run(sb, ['context', 'use', 'gamma', '-n', 'g1'], env), 'context use gamma');
    const r = ok(run(sb, ['kubeconfig'], env), 'kubeconfig');
    assert.equal(r.stdout, `Updated context "gamma" (namespace "g1") in ${second}\n`);
    assert.equal(parseYaml(readFileSync(second, 'utf8')).contexts[0].context.namespace, 'g1');
    const first = parseYaml(readFileSync(sb.kubeconfig, 'utf8'));
    assert.equal(first['current-context'], 'gamma');
    assert.deepEqual(first.contexts, parseYaml(FIXTURE_KUBECONFIG).contexts);
    assert.equal(statSync(second).mode & 0o777, 0o644);
  });
});

describe('usage errors', () => {
  test('a bad duration names the flag and exits 2', () => {
    const r = runDevtool(['destroy', '--timeout', '300']);
    const line = fails(r, ExitCode.usage, 'bad duration');
    assert.match(line, /invalid value "300" for flag --timeout: expected a duration with a unit/);
    assert.equal(r.stdout, '');
  });

  test('an unknown flag names the flag and exits 2', () => {
    const r = runDevtool(['up', '--namspace', 'dev']);
    assert.match(fails(r, ExitCode.usage, 'unknown flag'), /unknown flag --namspace for 'devtool up' \(did you mean "--namespace"\?\)/);
    assert.equal(r.stdout, '');
  });

  test('a missing argument names it and exits 2', () => {
    const r = runDevtool(['namespace', 'use']);
    assert.match(fails(r, ExitCode.usage, 'missing argument'), /missing argument <NAMESPACE> for 'devtool namespace use'/);
    assert.equal(r.stdout, '');
  });

  test('other usage errors: unknown command, bad value, extra argument, -- on a command without passthrough', () => {
    assert.match(fails(runDevtool(['upp']), ExitCode.usage, 'unknown command'), /unknown command "upp" for 'devtool' \(did you mean "up"\?\)/);
    assert.match(fails(runDevtool(['--loglevel', 'loud', 'version']), ExitCode.usage, 'bad loglevel'), /--loglevel: expected one of debug, info, warn, error/);
    assert.match(fails(runDevtool(['deploy', '--wait=maybe']), ExitCode.usage, 'bad bool'), /--wait: expected true or false/);
    assert.match(fails(runDevtool(['version', 'extra']), ExitCode.usage, 'extra argument'), /unexpected argument "extra"/);
    assert.match(fails(runDevtool(['up', '--', 'ls']), ExitCode.usage, '-- on up'), /takes no command after '--'/);
    assert.match(fails(runDevtool(['exec']), ExitCode.usage, 'exec without command'), /missing COMMAND after '--'/);
  });
});

describe('no terminal: nothing prompts, nothing hangs', () => {
  const cases: [string[], RegExp][] = [
    [['context'], /no terminal to prompt on: pass the context: devtool context use <URL_OR_CLUSTER_CONTEXT>/],
    [['context', 'use'], /devtool context use <URL_OR_CLUSTER_CONTEXT>/],
    [['namespace'], /no terminal to prompt on: pass the namespace: devtool namespace use <NAMESPACE>/],
  ];
  for (const [args, message] of cases) {
    test(`\`devtool ${args.join(' ')}\` with stdin closed fails fast naming what to pass`, () => {
      const started = Date.now();
      const r = runDevtool(args, { env: createSandbox().env, input: '', timeoutMs: 10_000 });
      assert.match(fails(r, ExitCode.usage, args.join(' ')), message);
      assert.ok(Date.now() - started < 10_000);
    });

    test(`\`devtool ${args.join(' ')}\` with stdin open but not a terminal does not wait for it`, async () => {
      const child = spawnDevtool(args, { env: createSandbox().env });
      let stderr = '';
      child.stderr.on('data', (d: Buffer) => (stderr += String(d)));
      const code = await new Promise<number | null>((resolve, reject) => {
        const timer = setTimeout(() => {
          child.kill('SIGKILL');
          reject(new Error(`devtool ${args.join(' ')} hung with stdin open`));
        }, 10_000);
        child.on('exit', (c) => {
          clearTimeout(timer);
          resolve(c);
        });
      });
      child.stdin.end();
      assert.equal(code, ExitCode.usage);
      assert.match(stderr, message);
    });
  }
});

describe('analytics', () => {
  test('each execution records its action; `analytics --disable` stops new records; `analytics` resumes', () => {
    const sb = createSandbox();
    ok(run(sb, ['version']), 'version');
    ok(run(sb, ['context', 'list']), 'context list');
    fails(run(sb, ['pipeline', 'deploy']), ExitCode.unavailable, 'pipeline deploy');
    const records = spoolRecords(sb);
    assert.deepEqual(
      records.map((r) => [r.action, r.success]),
      [
        ['version', true],
        ['context list', true],
        ['pipeline deploy', false],
      ],
    );
    const settings = JSON.parse(readFileSync(join(sb.devtoolHome, 'analytics.json'), 'utf8'));
    for (const r of records) {
      assert.deepEqual(Object.keys(r).sort(), ['action', 'actionId', 'machineId', 'os', 'success', 'timestamp', 'version']);
      assert.equal(r.version, pkg.version);
      assert.equal(r.machineId, settings.machineId);
      assert.match(String(r.actionId), UUID);
      assert.ok(Math.abs(Date.parse(String(r.timestamp)) - Date.now()) < 120_000);
    }
    assert.equal(new Set(records.map((r) => r.actionId)).size, 3, 'one action ID per execution');

    const off = ok(run(sb, ['analytics', '--disable']), 'analytics --disable');
    assert.equal(off.stdout, 'Analytics collection is disabled\n');
    ok(run(sb, ['version']), 'version');
    ok(run(sb, ['context', 'show']), 'context show');
    assert.equal(spoolRecords(sb).length, 3, 'no record after --disable');
    assert.equal(JSON.parse(readFileSync(join(sb.devtoolHome, 'analytics.json'), 'utf8')).enabled, false);

    assert.equal(ok(run(sb, ['analytics']), 'analytics').stdout, 'Analytics collection is enabled\n');
    ok(run(sb, ['version']), 'version');
    assert.deepEqual(
      spoolRecords(sb)
        .slice(3)
        .map((r) => r.action),
      ['analytics', 'version'],
    );
    assert.equal(spoolRecords(sb).at(-1)!.machineId, settings.machineId);
  });

  test('DEVTOOL_DISABLE_ANALYTICS=1 writes no record', () => {
    const sb = createSandbox();
    for (const args of [['version'], ['context', 'list'], ['pipeline', 'deploy']]) run(sb, args, { DEVTOOL_DISABLE_ANALYTICS: '1' });
    assert.equal(existsSync(join(sb.devtoolHome, 'analytics-spool.jsonl')), false);
    // It is not persisted.
    ok(run(sb, ['version']), 'version');
    assert.equal(spoolRecords(sb).length, 1);
  });
});

describe('logging', () => {
  test('--loglevel debug shows debug lines on stderr; devtool.log always gets them', () => {
    const sb = createSandbox();
    const quiet = ok(run(sb, ['version']), 'version');
    assert.equal(quiet.stderr, '', 'the default level is warn');
    const loud = ok(run(sb, ['--loglevel', 'debug', 'version']), '--loglevel debug version');
    assert.equal(loud.stdout, `devtool version ${pkg.version}\n`);
    const debugLines = lines(loud.stderr);
    assert.ok(debugLines.length >= 2, loud.stderr);
    for (const l of debugLines) assert.match(l, /^debug: /);
    assert.ok(debugLines.includes(`debug: devtool ${pkg.version}: --loglevel debug version`), loud.stderr);
    assert.ok(debugLines.includes('debug: exit 0'), loud.stderr);

    const log = lines(readFileSync(join(sb.devtoolHome, 'devtool.log'), 'utf8'));
    assert.ok(
      log.some((l) => / DEBUG devtool \S+: version$/.test(l)),
      'the run without --loglevel is in the log',
    );
    assert.ok(log.some((l) => / DEBUG devtool \S+: --loglevel debug version$/.test(l)));
    assert.equal(log.filter((l) => / DEBUG exit 0$/.test(l)).length, 2);
    assert.equal(statSync(join(sb.devtoolHome, 'devtool.log')).mode & 0o777, 0o600);

    // Error details go to the log, not the terminal.
    fails(run(sb, ['pipeline', 'deploy']), ExitCode.unavailable, 'pipeline deploy');
    assert.match(readFileSync(join(sb.devtoolHome, 'devtool.log'), 'utf8'), /error: UnavailableError: 'devtool pipeline deploy' needs the devtool service/);
  });
});

describe('commands that need the service', () => {
  test('pipeline and preview commands exit 3 saying they need the service', () => {
    const sb = createSandbox();
    for (const args of [
      ['pipeline', 'deploy'],
      ['pipeline', 'destroy'],
      ['preview', 'deploy'],
      ['preview', 'destroy'],
      ['preview', 'endpoints'],
      ['preview', 'list'],
    ]) {
      const r = run(sb, args);
      assert.match(fails(r, ExitCode.unavailable, args.join(' ')), new RegExp(`'devtool ${args.join(' ')}' needs the devtool service`));
      assert.equal(r.stdout, '');
    }
    // Logged out from a service context: they ask for a login instead.
    run(sb, ['context', 'use', 'https://svc.example']);
    assert.match(fails(run(sb, ['pipeline', 'deploy']), ExitCode.unavailable, 'pipeline deploy, logged out'), /requires a logged-in user/);
  });
});

describe('exit codes', () => {
  test('0 ok, 1 failure, 2 usage, 3 unavailable', () => {
    assert.deepEqual(ExitCode, { ok: 0, failure: 1, usage: 2, unavailable: 3, interrupted: 130 });
    assert.equal(runDevtool(['version']).code, 0);
    assert.match(
      fails(runDevtool(['context', 'use', 'no-such-context'], { env: createSandbox().env }), 1, 'unknown context'),
      /context "no-such-context" not found/,
    );
    assert.equal(runDevtool(['up', '--nope']).code, 2);
    assert.equal(runDevtool(['pipeline', 'deploy'], { env: createSandbox().env }).code, 3);
  });

  test('130 when the user interrupts a prompt (Ctrl-C on a terminal)', async (t) => {
    if (spawnSync('script', ['--version']).status !== 0) return t.skip('script (util-linux) is not installed: no pseudo-terminal');
    const sb = createSandbox();
    const prompt = (keys: string) =>
      new Promise<{ code: number | null; output: string }>((resolve, reject) => {
        // script(1) gives devtool a pseudo-terminal; -e returns its exit code.
        const command = `'${process.execPath}' '${cliPath}' context`;
        const child = spawn('script', ['-qec', command, '/dev/null'], { env: { PATH: process.env.PATH, TERM: 'dumb', ...sb.env }, cwd: sb.home });
        let output = '';
        let sent = false;
        const timer = setTimeout(() => {
          child.kill('SIGKILL');
          reject(new Error(`no exit; output: ${output}`));
        }, 15_000);
        child.stdout.on('data', (d: Buffer) => {
          output += String(d);
          if (!sent && output.includes('Select the context to use')) {
            sent = true;
            setTimeout(() => child.stdin.write(keys), 200);
          }
        });
        child.on('exit', (code) => {
          clearTimeout(timer);
          resolve({ code, output });
        });
      });
    const cancelled = await prompt('\x03');
    assert.equal(cancelled.code, ExitCode.interrupted, cancelled.output);
    assert.match(cancelled.output, /Cancelled/);
    // The same prompt answered with Enter selects the current context.
    const picked = await prompt('\r');
    assert.equal(picked.code, 0, picked.output);
    assert.match(picked.output, /Using context alpha: namespace "default" @ https:\/\/alpha\.invalid:6443/);
  });

  test('docs/configuration.md documents the exit codes', () => {
    const text = readFileSync(join(repoRoot, 'docs/configuration.md'), 'utf8');
    for (const [name, code] of Object.entries(ExitCode)) {
      assert.match(text, new RegExp(`^\\|\\s*\`?${code}\`?\\s*\\|`, 'm'), `docs/configuration.md has a table row for exit code ${code} (${name})`);
    }
  });
});

describe('scale and robustness', () => {
  /** Runs devtool with its stdout on a pipe whose reading end is closed at once, as `| head -1` does. */
  const closedPipe = (args: string[]) =>
    new Promise<{ code: number | null; stderr: string }>((resolve, reject) => {
      const child = spawnDevtool(args, { env: createSandbox().env });
      child.stdout.destroy();
      child.stdin.end();
      let stderr = '';
      child.stderr.on('data', (d: Buffer) => {
        stderr += String(d);
      });
      const timer = setTimeout(() => {
        child.kill('SIGKILL');
        reject(new Error(`no exit; stderr: ${stderr}`));
      }, 15_000);
      child.on('close', (code) => {
        clearTimeout(timer);
        resolve({ code, stderr });
      });
    });

  test('writing to a closed pipe ends quietly with 0 (`devtool help | head -1`)', async () => {
    for (const args of [['help'], ['completion', 'bash']]) {
      const r = await closedPipe(args);
      assert.equal(r.stderr, '', `devtool ${args.join(' ')}`);
      assert.equal(r.code, 0, `devtool ${args.join(' ')}`);
    }
  });
});

describe('an unusable DEVTOOL_HOME', () => {
  test('an impossible or non-folder DEVTOOL_HOME fails at once with one line naming it', () => {
    const sb = createSandbox();
    const file = join(sb.root, 'a-file');
    writeFileSync(file, '');
    for (const [home, why] of [
      ['/proc/x', /cannot be created/],
      ['/proc/x/y/z', /cannot be created/],
      [file, /not a folder/],
    ] as const) {
      for (const args of [['version'], ['context', 'list']]) {
        const r = runDevtool(args, { env: { ...sb.env, DEVTOOL_HOME: home }, timeoutMs: 5_000 });
        const line = fails(r, ExitCode.failure, `DEVTOOL_HOME=${home} devtool ${args.join(' ')}`);
        assert.ok(line.includes(`DEVTOOL_HOME ${home} cannot be used`), line);
        assert.match(line, why);
      }
    }
  });
});

describe('--loglevel and warnings', () => {
  test('a warning is printed once at debug, info and warn, and not at all at error', () => {
    const sb = createSandbox();
    const project = join(sb.root, 'project');
    mkdirSync(project);
    writeFileSync(join(project, 'compose.yaml'), 'services:\n  web:\n    build: .\n    image: web\n    networks: [x]\nnetworks:\n  x: {}\n');
    writeFileSync(join(project, 'Dockerfile'), 'FROM scratch\n');
    const warning = /top-level networks is ignored/;
    // `build` warns about the Compose file, then fails on the context's missing registry: no daemon is reached.
    for (const [level, count] of [
      ['debug', 1],
      ['info', 1],
      ['warn', 1],
      ['error', 0],
    ] as const) {
      const r = runDevtool(['build', '--loglevel', level], { env: { ...sb.env, DOCKER_HOST: 'unix:///nonexistent' }, cwd: project });
      assert.equal(r.code, ExitCode.failure, r.stderr);
      assert.equal(lines(r.stderr).filter((l) => warning.test(l)).length, count, `--loglevel ${level}: ${r.stderr}`);
      assert.match(r.stderr, /^Error: .*no registry/m);
    }
    // The log file has the warning whatever the level.
    assert.match(readFileSync(join(sb.devtoolHome, 'devtool.log'), 'utf8'), warning);
  });
});

describe('contexts from the environment and without a terminal', () => {
  test('`context list` marks the context of DEVTOOL_URL / DEVTOOL_TOKEN, as `context show` shows it', () => {
    const sb = createSandbox();
    for (const env of [{ DEVTOOL_URL: 'https://env.example' }, { DEVTOOL_URL: 'https://env.example', DEVTOOL_TOKEN: 'tok-env-123456' }]) {
      const shown = showContext(sb, env);
      const rows = contextRows(ok(run(sb, ['context', 'list'], env), 'context list').stdout);
      const current = rows.filter((row) => row.current);
      assert.equal(current.length, 1, JSON.stringify(rows));
      assert.deepEqual(current[0], { name: shown.name, current: true, namespace: shown.namespace, builder: shown.builder, registry: shown.registry });
      assert.equal(current[0]!.name, 'https://env.example');
    }
    // A token alone stands for the default service URL.
    const byToken = showContext(sb, { DEVTOOL_TOKEN: 'tok-env-123456' });
    const rows = contextRows(ok(run(sb, ['context', 'list'], { DEVTOOL_TOKEN: 'tok-env-123456' }), 'context list').stdout);
    assert.deepEqual(
      rows.filter((row) => row.current).map((row) => row.name),
      [byToken.name],
    );
  });

  test('`context --token T` needs no terminal with DEVTOOL_URL or a URL argument', () => {
    const sb = createSandbox();
    const contextsFile = join(sb.devtoolHome, 'contexts.json');
    // No prompt: the service named is asked (unreachable here: one line, nothing stored; a real
    // service logs in, service-context.e2e.test.ts).
    const viaEnv = run(sb, ['context', '--token', 'tok-one-123456'], { DEVTOOL_URL: 'https://svc.example' });
    assert.doesNotMatch(viaEnv.stderr, /terminal|prompt/);
    assert.match(fails(viaEnv, ExitCode.failure, 'DEVTOOL_URL context --token'), /^Error: cannot reach the devtool service at https:\/\/svc\.example: /);
    const viaArg = run(sb, ['context', 'https://other.example', '--token', 'tok-two-123456']);
    assert.doesNotMatch(viaArg.stderr, /terminal|prompt/);
    assert.match(fails(viaArg, ExitCode.failure, 'context URL --token'), /^Error: cannot reach the devtool service at https:\/\/other\.example: /);
    assert.equal(existsSync(contextsFile), false, 'nothing stored');
    // With nothing to say which context, it still asks for one, in one line.
    assert.match(fails(run(sb, ['context']), ExitCode.usage, 'context without a terminal'), /no terminal to prompt on/);
  });
});

describe('help texts match the documented commands', () => {
  test('synopses of pipeline and preview show [command]; --file and --name say what the commands do', () => {
    const usage = (args: string[]) => lines(ok(runDevtool([...args, '--help']), args.join(' ')).stdout);
    const synopsis = (args: string[]) => {
      const all = usage(args);
      return all[all.indexOf('Usage:') + 1]?.trim();
    };
    assert.equal(synopsis(['pipeline']), 'devtool pipeline [command] [flags]');
    assert.equal(synopsis(['preview']), 'devtool preview [command] [flags]');
    for (const args of [
      ['pipeline', 'deploy'],
      ['preview', 'deploy'],
    ]) {
      const file = usage(args).find((l) => l.includes('--file'))!;
      // "When unset, automatic deployment rules apply" and a default never both.
      assert.match(file, /when unset, automatic deployment rules apply$/, file);
      assert.doesNotMatch(file, /default/, file);
    }
    const name = usage(['destroy']).find((l) => l.includes('--name'))!;
    assert.match(name, /\(default: repository or folder name\)$/, name);
    // `devtool pipeline` alone prints its help and exits 0: the command is optional indeed.
    assert.equal(ok(runDevtool(['pipeline']), 'pipeline').stdout, ok(runDevtool(['pipeline', '--help']), 'pipeline --help').stdout);
  });
});

describe('up --env', () => {
  test('a bad --env is a usage error (exit 2) naming the flag, before any manifest or cluster is read', () => {
    const sb = createSandbox();
    for (const args of [
      ['up', '--env', 'FOO'],
      ['up', '-e', '1A=b'],
      ['up', '--env', 'A=1', '--env', '=x'],
    ]) {
      const line = fails(run(sb, args), ExitCode.usage, args.join(' '));
      assert.match(line, /invalid value ".*" for flag --env/, line);
    }
  });
});

describe('an unreachable cluster', () => {
  test('one line naming the API server and what to check, exit 1, whichever command met it', () => {
    const sb = createSandbox(
      [
        'apiVersion: v1',
        'kind: Config',
        'clusters:',
        '- {name: dead, cluster: {server: "https://127.0.0.1:1"}}',
        'contexts:',
        '- {name: dead, context: {cluster: dead, user: u}}',
        'current-context: dead',
        'users:',
        '- {name: u, user: {token: fake-token-dead}}',
        '',
      ].join('\n'),
    );
    const project = join(sb.root, 'app');
    mkdirSync(project);
    writeFileSync(join(project, 'compose.yaml'), 'services:\n  web:\n    image: nginx\n');
    for (const args of [['endpoints'], ['deploy'], ['destroy']]) {
      const line = fails(runDevtool(args, { env: sb.env, cwd: project }), ExitCode.failure, args.join(' '));
      assert.match(line, /^Error: cannot reach the Kubernetes API server https:\/\/127\.0\.0\.1:1 \(connection refused\)/, line);
      assert.match(line, /check that the cluster is running/, line);
      assert.doesNotMatch(line, /request to|ECONNREFUSED/, line);
    }
  });
});

describe('init -v1 beside a Compose file', () => {
  test('the dev container is the Compose service that mounts a host folder, not the folder name', () => {
    const sb = createSandbox();
    const project = join(sb.root, 'shop');
    mkdirSync(project);
    writeFileSync(join(project, 'compose.yaml'), 'services:\n  db:\n    image: postgres:16\n  api:\n    image: node:20\n    volumes: ["./src:/app/src"]\n');
    const r = ok(runDevtool(['init', '-v1'], { env: sb.env, cwd: project }), 'init -v1');
    assert.match(r.stdout, /dev container "api"/);
    const manifest = parseYaml(readFileSync(join(project, 'devtool.yml'), 'utf8')) as { services: Record<string, unknown> };
    assert.deepEqual(Object.keys(manifest.services), ['api']);
  });
});
