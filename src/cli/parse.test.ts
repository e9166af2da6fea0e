import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rootCommand } from '../commands/index.ts';
import { UsageError } from '../base/errors.ts';
import { deployOptions } from '../commands/deploy/spec.ts';
import { pipelineDeployOptions } from '../commands/pipeline/spec.ts';
import { serviceOptions } from '../commands/shared.ts';
import { parseCommandLine } from './parse.ts';

const parse = (...argv: string[]) => parseCommandLine(argv, rootCommand);

/** The UsageError a command line gives (fails the test when it parses). */
function usageError(...argv: string[]): UsageError {
  try {
    parse(...argv);
  } catch (err) {
    assert.ok(err instanceof UsageError, `expected a UsageError, got ${String(err)}`);
    assert.equal(err.exitCode, 2);
    return err;
  }
  assert.fail(`expected a usage error for: devtool ${argv.join(' ')}`);
}

test('resolves commands and subcommands', () => {
  assert.deepEqual(parse('version').path, ['version']);
  assert.deepEqual(parse('context', 'use', 'alpha').path, ['context', 'use']);
  assert.deepEqual(parse('context', 'use', 'alpha').invocation.args, ['alpha']);
  assert.deepEqual(parse('namespace').path, ['namespace']);
  assert.deepEqual(parse('pipeline', 'destroy').path, ['pipeline', 'destroy']);
  assert.deepEqual(parse().path, []);
  // A positional that is named like a subcommand, after the subcommand, is an argument.
  assert.deepEqual(parse('context', 'use', 'list').invocation.args, ['list']);
  assert.deepEqual(parse('context', 'use', 'list').path, ['context', 'use']);
});

test('the global --loglevel goes before or after the command, with or without =', () => {
  for (const argv of [
    ['--loglevel', 'debug', 'context', 'list'],
    ['--loglevel=debug', 'context', 'list'],
    ['context', '--loglevel', 'debug', 'list'],
    ['context', 'list', '--loglevel', 'debug'],
  ]) {
    const p = parse(...argv);
    assert.deepEqual(p.path, ['context', 'list'], argv.join(' '));
    assert.equal(p.invocation.string('loglevel'), 'debug', argv.join(' '));
  }
  assert.equal(parse('version').invocation.string('loglevel'), 'warn');
  const bad = usageError('--loglevel', 'verbose', 'version');
  assert.match(bad.message, /invalid value "verbose" for flag --loglevel: expected one of debug, info, warn, error/);
});

test('an option value is never taken for a subcommand', () => {
  // "list" is the value of --namespace here, not the subcommand.
  const p = parse('context', '--namespace', 'list');
  assert.deepEqual(p.path, ['context']);
  assert.equal(p.invocation.string('namespace'), 'list');
  // With the value attached, the next word is the subcommand again.
  const attached = parse('context', '-ndev', 'use', 'alpha');
  assert.deepEqual(attached.path, ['context', 'use']);
  assert.deepEqual(attached.invocation.args, ['alpha']);
  const withEquals = parse('context', '--namespace=dev', 'use', 'alpha');
  assert.deepEqual(withEquals.path, ['context', 'use']);
});

test('string options, long and short, and their defaults', () => {
  const p = parse('up', 'api', '--file', 'other.yml', '-n', 'dev', '--context=kind');
  assert.deepEqual(p.invocation.args, ['api']);
  assert.equal(p.invocation.string('file'), 'other.yml');
  assert.equal(p.invocation.string('namespace'), 'dev');
  assert.equal(p.invocation.string('context'), 'kind');
  assert.ok(p.invocation.has('file'));

  const defaults = parse('up');
  assert.equal(defaults.invocation.string('file'), 'devtool.yml');
  assert.equal(defaults.invocation.has('file'), false);
  // Defaults described in words are not values.
  assert.equal(defaults.invocation.string('namespace'), undefined);

  assert.equal(parse('up', '-fother.yml').invocation.string('file'), 'other.yml');
  const missing = usageError('up', '--file');
  assert.match(missing.message, /flag --file needs a value \(string\)/);
  assert.match(usageError('up', '--file', '-x').message, /^flag --file needs a value \(string\): a value starting with '-' is written --file=VALUE$/);
});

test('booleans: bare, =true, =false, and bad values', () => {
  assert.equal(parse('deploy').invocation.bool('wait'), false);
  assert.equal(parse('deploy', '--wait').invocation.bool('wait'), true);
  assert.equal(parse('deploy', '--wait=true').invocation.bool('wait'), true);
  assert.equal(parse('deploy', '--wait=TRUE').invocation.bool('wait'), true);
  assert.equal(parse('deploy', '--wait=1').invocation.bool('wait'), true);
  const f = parse('deploy', '--wait=false');
  assert.equal(f.invocation.bool('wait'), false);
  assert.equal(f.invocation.has('wait'), true, '--wait=false was typed');
  assert.equal(parse('deploy', '--wait', '--wait=false').invocation.bool('wait'), false);
  assert.equal(parse('destroy', '-v').invocation.bool('volumes'), true);
  const bad = usageError('deploy', '--wait=maybe');
  assert.match(bad.message, /invalid value "maybe" for flag --wait: expected true or false/);
});

test('lists are repeatable and default to empty', () => {
  const p = parse('deploy', '--var', 'A=1', '--var', 'B=2', '--var=C=3');
  assert.deepEqual(p.invocation.list('var'), ['A=1', 'B=2', 'C=3']);
  assert.deepEqual(parse('deploy').invocation.list('var'), []);
  assert.deepEqual(parse('up', '-e', 'X=1', '--env', 'Y=2').invocation.list('env'), ['X=1', 'Y=2']);
  assert.deepEqual(parse('build', '--secret', 'id=a,src=/tmp/a', '--secret', 'id=b,src=/tmp/b').invocation.list('secret'), [
    'id=a,src=/tmp/a',
    'id=b,src=/tmp/b',
  ]);
});

test('lists of assignments: the handler reads a map, or gets a usage error in its place', () => {
  const p = parse('deploy', '--var', 'A=1', '--var=B=x=y', '--var', 'A=2');
  assert.deepEqual(p.invocation.input(deployOptions).opts.var, { A: '2', B: 'x=y' });
  const bad = (...argv: string[]): UsageError => {
    const { invocation, spec } = parse(...argv);
    try {
      invocation.input(spec.options ?? []);
    } catch (err) {
      assert.ok(err instanceof UsageError, String(err));
      return err;
    }
    assert.fail(`expected a usage error for: devtool ${argv.join(' ')}`);
  };
  const err = bad('up', '-e', 'A=1', '--env', '1A=b');
  assert.equal(err.message, 'invalid value "1A=..." for flag --env: expected KEY=VALUE with KEY a variable name (a letter or _, then letters, digits or _)');
  assert.equal(err.hint, "run 'devtool up --help' for usage");
  assert.equal(err.exitCode, 2);
  const pipeline = bad('pipeline', 'deploy', '--var', 'NOEQUALS');
  assert.match(pipeline.message, /^invalid value "\.\.\." for flag --var: expected KEY=VALUE, found no "="$/);
  assert.equal(pipeline.hint, "run 'devtool pipeline deploy --help' for usage");
});

test('durations: parsed to milliseconds, default 5m0s, units required', () => {
  assert.equal(parse('deploy').invocation.duration('timeout'), 300_000);
  assert.equal(parse('deploy', '--timeout', '90s').invocation.duration('timeout'), 90_000);
  assert.equal(parse('destroy', '--timeout=1h30m').invocation.duration('timeout'), 5_400_000);
  assert.equal(parse('pipeline', 'deploy', '--timeout', '2m').invocation.duration('timeout'), 120_000);
  const bad = usageError('destroy', '--timeout', '300');
  assert.match(bad.message, /^invalid value "300" for flag --timeout: expected a duration with a unit/);
  assert.equal(bad.hint, "run 'devtool destroy --help' for usage");
  assert.match(usageError('deploy', '--timeout', '5 minutes').message, /--timeout/);
});

test('allowed values', () => {
  assert.equal(parse('endpoints', '--output', 'md').invocation.string('output'), 'md');
  assert.equal(parse('endpoints', '-o', 'json').invocation.string('output'), 'json');
  assert.equal(parse('endpoints').invocation.string('output'), undefined);
  assert.match(usageError('endpoints', '--output', 'yaml').message, /invalid value "yaml" for flag --output: expected one of json, md/);
  // preview endpoints allows json only.
  assert.match(usageError('preview', 'endpoints', '--output', 'md').message, /expected one of json$/);
  assert.equal(parse('preview', 'deploy').invocation.string('scope'), 'personal');
  assert.equal(parse('preview', 'deploy', '--scope', 'global').invocation.string('scope'), 'global');
  assert.match(usageError('preview', 'deploy', '--scope', 'team').message, /--scope: expected one of personal, global/);
});

test('exec passes everything after -- through', () => {
  const p = parse('exec', 'api', '-n', 'dev', '--', 'npm', 'test', '--watch', '-h');
  assert.deepEqual(p.invocation.args, ['api']);
  assert.equal(p.invocation.string('namespace'), 'dev');
  assert.deepEqual(p.invocation.rest, ['npm', 'test', '--watch', '-h']);
  assert.equal(p.help, false, '-h after -- belongs to the command');
  assert.deepEqual(parse('exec', '--', 'bash').invocation.args, []);
  assert.match(usageError('exec').message, /missing COMMAND after '--' for 'devtool exec'/);
  assert.match(usageError('exec', 'api').message, /missing COMMAND/);
});

test('commands without passthrough reject words after --', () => {
  const err = usageError('up', '--', 'ls');
  assert.match(err.message, /'devtool up' takes no command after '--' \(got "ls"\)/);
  assert.match(usageError('context', 'list', '--', 'x').message, /'devtool context list' takes no command after '--'/);
});

test('init takes -v1 and --v1', () => {
  assert.equal(parse('init', '-v1').invocation.bool('v1'), true);
  assert.equal(parse('init', '--v1').invocation.bool('v1'), true);
  assert.equal(parse('init').invocation.bool('v1'), false);
  assert.equal(parse('init', '-v1', '--replace').invocation.bool('replace'), true);
  // Only init reads -v1 that way.
  assert.ok(usageError('destroy', '-v1'));
});

test('a missing required argument names it', () => {
  const err = usageError('namespace', 'use');
  assert.equal(err.message, "missing argument <NAMESPACE> for 'devtool namespace use'");
  assert.equal(err.hint, "run 'devtool namespace use --help' for usage");
  assert.match(usageError('context', 'delete').message, /missing argument <CONTEXT_URL_OR_NAME> for 'devtool context delete'/);
  assert.match(usageError('completion').message, /missing argument <shell>/);
});

test('an unexpected extra argument is named', () => {
  assert.equal(usageError('namespace', 'use', 'a', 'b').message, `unexpected argument "b" for 'devtool namespace use'`);
  assert.equal(usageError('version', 'now').message, `unexpected argument "now" for 'devtool version'`);
  assert.equal(usageError('up', 'api', 'web').message, `unexpected argument "web" for 'devtool up'`);
  // Variadic arguments take any number.
  assert.deepEqual(parse('build', 'api', 'web', 'worker').invocation.args, ['api', 'web', 'worker']);
});

test('an unknown flag is named, with a suggestion when one is close', () => {
  const err = usageError('up', '--namspace', 'dev');
  assert.equal(err.message, `unknown flag --namspace for 'devtool up' (did you mean "--namespace"?)`);
  assert.equal(err.hint, "run 'devtool up --help' for usage");
  assert.equal(usageError('up', '--zzzzzzzz').message, `unknown flag --zzzzzzzz for 'devtool up'`);
  assert.match(usageError('version', '-x').message, /^unknown flag -x for 'devtool version'/);
  // A flag of another command is unknown here.
  assert.match(usageError('version', '--wait').message, /unknown flag --wait for 'devtool version'/);
});

test('an unknown command is named, with a suggestion', () => {
  const err = usageError('upp');
  assert.equal(err.message, `unknown command "upp" for 'devtool' (did you mean "up"?)`);
  assert.equal(err.hint, "run 'devtool --help' for usage");
  assert.equal(usageError('context', 'u').message, `unknown command "u" for 'devtool context' (did you mean "use"?)`);
  assert.equal(usageError('pipeline', 'deplyo').message, `unknown command "deplyo" for 'devtool pipeline' (did you mean "deploy"?)`);
  assert.equal(usageError('frobnicate').message, `unknown command "frobnicate" for 'devtool'`);
  // `context [URL]`: a URL is its argument, a misspelt subcommand is still one.
  assert.deepEqual(parse('context', 'https://x.example', '--token', 't').path, ['context']);
  assert.equal(usageError('context', 'lsit').message, `unknown command "lsit" for 'devtool context' (did you mean "list"?)`);
});

test("a command's flag before the command is the command's, or named as not its own", () => {
  const p = parse('--context', 'https://devtool.example', 'namespace', 'list');
  assert.deepEqual(p.path, ['namespace', 'list']);
  assert.equal(p.invocation.input(serviceOptions).opts.context, 'https://devtool.example');
  const q = parse('pipeline', '-c', 'https://devtool.example', 'deploy', '--wait');
  assert.deepEqual(q.path, ['pipeline', 'deploy']);
  assert.equal(q.invocation.input(pipelineDeployOptions).opts.context, 'https://devtool.example');
  assert.equal(usageError('--context', 'x', 'version').message, `unknown flag --context for 'devtool version'`);
  // -f takes a value in some commands (--file) and none in logs (--follow): before the command it is neither.
  assert.equal(usageError('-f', 'devtool.yml', 'up').message, `unknown command "devtool.yml" for 'devtool'`);
});

test('-h and --help ask for help, even next to otherwise wrong input', () => {
  for (const flag of ['-h', '--help']) {
    const p = parse('deploy', flag);
    assert.equal(p.help, true);
    assert.deepEqual(p.path, ['deploy']);
    assert.equal(parse('context', 'use', flag).help, true);
    assert.deepEqual(parse(flag, 'context', 'use').path, ['context', 'use']);
    assert.equal(parse('namespace', 'use', flag).help, true, 'no missing-argument error with help');
    assert.equal(parse('up', '--nope', flag).help, true, 'no unknown-flag error with help');
    assert.equal(parse('up', '--env', 'NOEQUALS', flag).help, true, 'no assignment error with help');
  }
  assert.equal(parse('deploy').help, false);
});
