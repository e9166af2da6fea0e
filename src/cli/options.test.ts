/**
 * Handlers read their options as a typed object (OptionValues in spec.ts). The `@ts-expect-error`
 * lines are the type-level half of these tests: `npx tsc --noEmit` fails if one of them compiles.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rootCommand } from '../commands/index.ts';
import type { buildOptions } from '../commands/build/spec.ts';
import { deployOptions } from '../commands/deploy/spec.ts';
import { endpointsOptions } from '../commands/endpoints/spec.ts';
import type { initOptions } from '../commands/init/spec.ts';
import { upOptions } from '../commands/up/spec.ts';
import { parseCommandLine } from './parse.ts';
import { command, optionKey, type CommandHandler, type OptionValues } from './spec.ts';

const parse = (...argv: string[]) => parseCommandLine(argv, rootCommand).invocation;

test('a handler reads each option under its camelCase key, with its type', () => {
  const { opts, given, args } = parse('deploy', '--dry-run', '--var', 'A=1', '--timeout', '90s', '-n', 'dev').input(deployOptions);
  const dryRun: boolean = opts.dryRun;
  const timeout: number = opts.timeout;
  const vars: Record<string, string> = opts.var;
  const file: string[] = opts.file;
  const name: string | undefined = opts.name;
  assert.deepEqual(
    { dryRun, timeout, vars, file, name, namespace: opts.namespace, wait: opts.wait },
    { dryRun: true, timeout: 90_000, vars: { A: '1' }, file: [], name: undefined, namespace: 'dev', wait: false },
  );
  assert.deepEqual(args, []);
  // `given` holds only what was typed: --file (repeatable, so a list) is absent here.
  assert.deepEqual(given, { dryRun: true, var: { A: '1' }, timeout: 90_000, namespace: 'dev' });
  // @ts-expect-error -- a misspelled option is a compile error (it was `inv.bool('dryrun')`: false)
  assert.equal(opts.dryrun, undefined);
});

test('typed values follow the spec: allowed values, lists of assignments, --flag=false', () => {
  const endpoints = parse('endpoints', '-o', 'md').input(endpointsOptions).opts;
  const output: 'json' | 'md' | undefined = endpoints.output;
  assert.equal(output, 'md');
  const up = parse('up', 'api', '-e', 'A=1', '--deploy=false', '-f', 'other.yml').input(upOptions);
  const env: Record<string, string> = up.opts.env;
  assert.deepEqual(env, { A: '1' });
  assert.equal(up.opts.deploy, false);
  assert.equal(up.given.deploy, false, '--deploy=false was typed');
  assert.equal(up.given.file, 'other.yml');
  assert.deepEqual(up.args, ['api']);
  assert.equal(up.commandName, 'up');
  assert.equal(optionKey('endpoint-domain'), 'endpointDomain');
});

test('a handler cannot read an option its command does not declare', () => {
  const runInit: CommandHandler<typeof initOptions> = async (_f, inv) => {
    const replace: boolean = inv.opts.replace;
    // @ts-expect-error -- the issue's example: 'replce' is not an option of init
    void inv.opts.replce;
    // @ts-expect-error -- nor is an option of another command
    void inv.opts.deploy;
    void replace;
  };
  // @ts-expect-error -- options are not read by name any more
  void ((inv: Parameters<typeof runInit>[1]) => inv.bool('replace'));
  // @ts-expect-error -- and command() refuses a handler written for other options
  command({ name: 'x', summary: 'x', options: upOptions, load: async () => runInit });
  type Build = OptionValues<typeof buildOptions>;
  const build: Build = { file: undefined, noCache: false, secret: [], exportCache: undefined, cacheFrom: [], context: undefined };
  assert.equal(build.noCache, false);
});
