import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ExitCode } from '../../base/errors.ts';
import { bashCompletion, zshCompletion } from '../../cli/completion.ts';
import { failure, runCommand, success } from '../../../test/command-harness.ts';
import { rootCommand } from '../index.ts';

test('`completion bash` and `completion zsh` print the scripts of the command tree', async () => {
  const bash = success(await runCommand(['completion', 'bash']));
  assert.equal(bash.stdout, bashCompletion(rootCommand));
  assert.match(bash.stdout, /complete -o default -F _devtool devtool/);
  const zsh = success(await runCommand(['completion', 'zsh']));
  assert.equal(zsh.stdout, zshCompletion(rootCommand));
  assert.match(zsh.stdout, /^#compdef devtool/);
});

test('another shell, or none: one line, exit 2', async () => {
  const fish = await runCommand(['completion', 'fish']);
  assert.equal(failure(fish, ExitCode.usage), `Error: unsupported shell "fish" for 'devtool completion': expected bash or zsh`);
  assert.equal(fish.stdout, '');
  assert.match(failure(await runCommand(['completion']), ExitCode.usage), /missing argument <shell> for 'devtool completion'/);
});
