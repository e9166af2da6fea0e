import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rootCommand } from '../commands/index.ts';
import { commandHelp, fullHelp, rootHelp } from './help.ts';
import { globalOptions, synopsis, visibleCommands, type CommandSpec, type OptionSpec } from './spec.ts';

const allCommands = () => visibleCommands(rootCommand);

function find(path: string[]): CommandSpec {
  let spec = rootCommand;
  for (const name of path) spec = spec.subcommands!.find((c) => c.name === name)!;
  assert.ok(spec, path.join(' '));
  return spec;
}

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The help line of one option: flag, type and, when it has one, the default. */
function optionLine(help: string, o: OptionSpec): string {
  const line = help.split('\n').find((l) => new RegExp(`^ {2}(-${o.short}, )?\\s*--${escapeRegExp(o.name)} ${o.type}\\s`).test(l));
  assert.ok(line, `--${o.name} ${o.type} is listed`);
  return line;
}

test('there are commands to check', () => {
  const paths = allCommands().map((c) => c.path.join(' '));
  for (const p of [
    'analytics',
    'build',
    'context',
    'context use',
    'context list',
    'context show',
    'context delete',
    'deploy',
    'destroy',
    'doctor',
    'down',
    'endpoints',
    'exec',
    'help',
    'init',
    'kubeconfig',
    'namespace',
    'namespace create',
    'namespace delete',
    'namespace list',
    'namespace use',
    'pipeline deploy',
    'pipeline destroy',
    'preview deploy',
    'preview destroy',
    'preview endpoints',
    'preview list',
    'restart',
    'status',
    'up',
    'version',
  ]) {
    assert.ok(paths.includes(p), p);
  }
});

test("every command's help lists each of its options with type, default and meaning", () => {
  for (const { path, spec } of allCommands()) {
    const help = commandHelp(path, spec);
    const where = `devtool ${path.join(' ')} --help`;
    assert.ok(help.includes(`Usage:\n  ${synopsis(path, spec)}\n`), `${where}: synopsis`);
    for (const o of [...(spec.options ?? []), ...globalOptions]) {
      if (o.hidden) continue;
      const line = optionLine(help, o);
      assert.ok(line.includes(o.description), `${where}: --${o.name} meaning`);
      const def = o.defaultText ?? o.default ?? (o.type === 'bool' ? 'false' : undefined);
      if (def !== undefined) assert.ok(line.endsWith(`(default: ${def})`), `${where}: --${o.name} default in "${line}"`);
      else assert.ok(line.endsWith(o.description), `${where}: --${o.name} has no default`);
      if (o.short) assert.ok(line.includes(`-${o.short}, --${o.name}`), `${where}: -${o.short}`);
    }
    for (const sub of spec.subcommands ?? []) {
      if (!sub.hidden) assert.match(help, new RegExp(`^ {2}${sub.name} +${escapeRegExp(sub.summary)}$`, 'm'), `${where}: lists ${sub.name}`);
    }
  }
});

test('every documented option, with its type and default, is in the help', () => {
  // [command, option, type, default shown]: every documented option of every command.
  const documented: [string, string, string, string | undefined][] = [
    ['analytics', 'disable', 'bool', 'false'],
    ['build', 'file', 'string', undefined],
    ['build', 'no-cache', 'bool', 'false'],
    ['build', 'secret', 'list', undefined],
    ['build', 'export-cache', 'string', undefined],
    ['build', 'cache-from', 'list', undefined],
    ['context', 'token', 'string', undefined],
    ['context', 'namespace', 'string', undefined],
    ['context', 'builder', 'string', undefined],
    ['context use', 'token', 'string', undefined],
    ['context use', 'namespace', 'string', undefined],
    ['context use', 'builder', 'string', undefined],
    ['deploy', 'build', 'bool', 'false'],
    ['deploy', 'dependencies', 'bool', 'false'],
    // A list, so several Compose files merge in order; one value reads as a string option would.
    ['deploy', 'file', 'list', 'devtool.yml'],
    ['deploy', 'name', 'string', 'repository or folder name'],
    ['deploy', 'namespace', 'string', undefined],
    ['deploy', 'timeout', 'duration', '5m0s'],
    ['deploy', 'var', 'list', undefined],
    ['deploy', 'wait', 'bool', 'false'],
    // Destroy finds what deploy made, so both default to the repository's name, else the folder's.
    ['destroy', 'name', 'string', 'repository or folder name'],
    ['destroy', 'namespace', 'string', undefined],
    ['destroy', 'timeout', 'duration', '5m0s'],
    ['destroy', 'volumes', 'bool', 'false'],
    ['destroy', 'wait', 'bool', 'false'],
    ['down', 'file', 'string', 'devtool.yml'],
    ['down', 'namespace', 'string', 'current namespace'],
    ['down', 'context', 'string', 'current context'],
    ['down', 'volumes', 'bool', 'false'],
    ['endpoints', 'output', 'string', undefined],
    ['exec', 'file', 'string', 'devtool.yml'],
    ['exec', 'namespace', 'string', 'current namespace'],
    ['exec', 'context', 'string', 'current context'],
    ['init', 'file', 'string', 'devtool.yml'],
    ['init', 'replace', 'bool', 'false'],
    ['init', 'namespace', 'string', 'current context namespace'],
    ['init', 'context', 'string', 'current context'],
    ['init', 'v1', 'bool', 'false'],
    // The runner clones the repository's default branch, whatever its name (main or another).
    ['pipeline deploy', 'branch', 'string', "the repository's default branch"],
    ['pipeline deploy', 'file', 'string', undefined],
    ['pipeline deploy', 'name', 'string', 'folder name'],
    ['pipeline deploy', 'namespace', 'string', 'current cluster client config namespace'],
    ['pipeline deploy', 'repository', 'string', undefined],
    ['pipeline deploy', 'skip-if-exists', 'bool', 'false'],
    ['pipeline deploy', 'timeout', 'duration', '5m0s'],
    ['pipeline deploy', 'var', 'list', undefined],
    ['pipeline deploy', 'wait', 'bool', 'false'],
    ['pipeline destroy', 'name', 'string', 'folder name'],
    ['pipeline destroy', 'namespace', 'string', 'current cluster client config namespace'],
    ['pipeline destroy', 'timeout', 'duration', '5m0s'],
    ['pipeline destroy', 'volumes', 'bool', 'false'],
    ['pipeline destroy', 'wait', 'bool', 'false'],
    ['preview deploy', 'branch', 'string', 'current branch'],
    ['preview deploy', 'file', 'string', undefined],
    ['preview deploy', 'repository', 'string', 'repo of current git configuration'],
    ['preview deploy', 'scope', 'string', 'personal'],
    ['preview deploy', 'sourceUrl', 'string', undefined],
    ['preview deploy', 'timeout', 'duration', '5m0s'],
    ['preview deploy', 'var', 'list', undefined],
    ['preview deploy', 'wait', 'bool', 'false'],
    ['preview endpoints', 'output', 'string', undefined],
    ['preview list', 'context', 'string', 'current context'],
    ['namespace create', 'context', 'string', 'current context'],
    ['namespace list', 'context', 'string', 'current context'],
    ['user list', 'context', 'string', 'current context'],
    ['pipeline deploy', 'context', 'string', 'current context'],
    ['restart', 'file', 'string', 'devtool.yml'],
    ['restart', 'namespace', 'string', undefined],
    ['restart', 'context', 'string', undefined],
    ['status', 'file', 'string', 'devtool.yml'],
    ['status', 'namespace', 'string', 'current namespace'],
    ['status', 'context', 'string', 'current context'],
    ['status', 'info', 'bool', 'false'],
    ['status', 'watch', 'bool', 'false'],
    ['up', 'file', 'string', 'devtool.yml'],
    ['up', 'namespace', 'string', 'current namespace'],
    ['up', 'context', 'string', 'current context'],
    ['up', 'deploy', 'bool', 'false'],
    ['up', 'reset', 'bool', 'false'],
    ['up', 'env', 'list', undefined],
  ];
  for (const [command, name, type, def] of documented) {
    const path = command.split(' ');
    const spec = find(path);
    const opt = spec.options?.find((o) => o.name === name);
    assert.ok(opt, `${command} --${name} exists`);
    assert.equal(opt.type, type, `${command} --${name} type`);
    const line = optionLine(commandHelp(path, spec), opt);
    if (def !== undefined) assert.ok(line.includes(`(default: ${def})`), `${command} --${name}: "${line}"`);
  }
  assert.deepEqual(find(['endpoints']).options![0]!.allowed, ['json', 'md']);
  assert.deepEqual(find(['preview', 'endpoints']).options!.find((o) => o.name === 'output')!.allowed, ['json']);
  assert.deepEqual(find(['preview', 'deploy']).options!.find((o) => o.name === 'scope')!.allowed, ['personal', 'global']);
  assert.deepEqual(globalOptions[0], { ...globalOptions[0], name: 'loglevel', default: 'warn', allowed: ['debug', 'info', 'warn', 'error'] });
});

test('the synopsis shows optional parameters in square brackets and required ones in angle brackets', () => {
  const expected: Record<string, string> = {
    up: 'devtool up [devName] [flags]',
    down: 'devtool down [devName] [flags]',
    doctor: 'devtool doctor [devName] [flags]',
    build: 'devtool build [service...] [flags]',
    exec: 'devtool exec [devName] [flags] -- COMMAND',
    context: 'devtool context [command] [URL] [flags]',
    'context use': 'devtool context use [URL_OR_CLUSTER_CONTEXT] [flags]',
    'context delete': 'devtool context delete <CONTEXT_URL_OR_NAME> [flags]',
    'context list': 'devtool context list [flags]',
    namespace: 'devtool namespace [command] [flags]',
    'namespace use': 'devtool namespace use <NAMESPACE> [flags]',
    'namespace create': 'devtool namespace create <NAMESPACE> [flags]',
    pipeline: 'devtool pipeline [command] [flags]',
    preview: 'devtool preview [command] [flags]',
    'preview deploy': 'devtool preview deploy [name] [flags]',
    'preview endpoints': 'devtool preview endpoints [name] [flags]',
    help: 'devtool help [command...] [flags]',
    version: 'devtool version [flags]',
  };
  for (const [command, line] of Object.entries(expected)) {
    const path = command.split(' ');
    assert.equal(synopsis(path, find(path)), line);
    assert.ok(commandHelp(path, find(path)).includes(`\n  ${line}\n`), command);
  }
});

test('the root help lists every command; full help has every command and subcommand', () => {
  const root = rootHelp(rootCommand);
  for (const c of rootCommand.subcommands ?? []) {
    const line = new RegExp(`^ {2}${c.name} +${escapeRegExp(c.summary)}$`, 'm');
    if (c.hidden) assert.doesNotMatch(root, line, `${c.name} is hidden`);
    else assert.match(root, line, c.name);
  }
  assert.match(root, /--loglevel string +Amount of information output \(default: warn\)/);
  const full = fullHelp(rootCommand);
  assert.ok(full.startsWith(root));
  for (const { path, spec } of allCommands()) {
    assert.ok(full.includes(`======== devtool ${path.join(' ')} ========\n${commandHelp(path, spec)}`), path.join(' '));
  }
});
