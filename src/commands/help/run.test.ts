import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ExitCode } from '../../base/errors.ts';
import { commandHelp, fullHelp, rootHelp } from '../../cli/help.ts';
import { visibleCommands } from '../../cli/spec.ts';
import { commandSandbox, failure, runCommand, success } from '../../../test/command-harness.ts';
import { rootCommand } from '../index.ts';

test('`help` prints the help of every command and subcommand; `help WORDS` that of one, as --help does', async () => {
  const all = success(await runCommand(['help']));
  assert.equal(all.stdout, fullHelp(rootCommand));
  for (const { path } of visibleCommands(rootCommand)) assert.ok(all.stdout.includes(`======== devtool ${path.join(' ')} ========\n`), path.join(' '));
  const contextUse = rootCommand.subcommands!.find((c) => c.name === 'context')!.subcommands!.find((c) => c.name === 'use')!;
  const one = success(await runCommand(['help', 'context', 'use']));
  assert.equal(one.stdout, commandHelp(['context', 'use'], contextUse));
  assert.equal(success(await runCommand(['context', 'use', '--help'])).stdout, one.stdout);
  assert.equal(success(await runCommand(['-h', 'context', 'use'])).stdout, one.stdout);
});

test('`devtool` alone prints the command list; help records no analytics', async () => {
  const sandbox = commandSandbox();
  const plain = success(await runCommand([], { sandbox }));
  assert.equal(plain.stdout, rootHelp(rootCommand));
  assert.match(plain.stdout, /^ {2}version +Display the installed version$/m);
  assert.equal(success(await runCommand(['--help'], { sandbox })).stdout, plain.stdout);
  assert.equal(success(await runCommand(['deploy', '--help'], { sandbox })).stderr, '');
});

test('`help` of an unknown command: one line, exit 2, nothing on stdout', async () => {
  const r = await runCommand(['help', 'context', 'nope']);
  assert.equal(failure(r, ExitCode.usage), `Error: unknown command "context nope" for 'devtool help'; run 'devtool help' for every command`);
  assert.equal(r.stdout, '');
});
