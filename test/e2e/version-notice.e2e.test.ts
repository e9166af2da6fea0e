/**
 * The newer-version notice through the built CLI: the service program runs in this test's process
 * (test/in-process-service.ts: server/app.ts on the in-memory store) with a version above the
 * CLI's, on a loopback port; the CLI runs in a pseudo-terminal, as a person's. What this adds to
 * src/cli/version-notice.test.ts: the bundles (the header's name in the CLI's copy of the
 * contract, the notice's module loaded after the command) and a real terminal. The clock is the
 * real one, so the day's wait itself is left to the unit tests.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { type InProcessService, inProcessService } from '../in-process-service.ts';
import { createSandbox, type Sandbox, spawnDevtool } from './cli.ts';
import { runInPty } from './pty.ts';

const NEWER = '99.0.0';
let service: InProcessService;
let sandbox: Sandbox;

before(async () => {
  service = await inProcessService({ version: NEWER });
  sandbox = createSandbox();
  // Without a terminal: logging in tells nothing. Not spawnSync: the service answers from this process.
  const login = spawnDevtool(['context', 'use', service.address, '--token', service.alice.token], { env: sandbox.env });
  let stderr = '';
  login.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const code = await new Promise((resolve) => login.once('exit', resolve));
  assert.equal(code, 0, stderr);
  assert.doesNotMatch(stderr, /runs devtool/);
});

after(() => service?.close());

async function inTerminal(args: string[]): Promise<string> {
  const pty = runInPty(args, { cwd: sandbox.home, env: { ...sandbox.env, NO_COLOR: '1' } });
  const code = await pty.exit(60_000);
  assert.equal(code, 0, pty.output());
  return pty.output();
}

test('a terminal is told once, after the output; --loglevel error hides it without using it up', { timeout: 120_000 }, async () => {
  const stamps = join(sandbox.devtoolHome, 'version-notice.json');
  const quiet = await inTerminal(['--loglevel', 'error', 'namespace', 'list']);
  assert.match(quiet, /alice-devtool/);
  assert.doesNotMatch(quiet, /runs devtool/);
  assert.equal(existsSync(stamps), false);

  const told = await inTerminal(['namespace', 'list']);
  const line = `warn: the devtool service at ${service.address} runs devtool ${NEWER}, this CLI is `;
  assert.ok(told.indexOf(line) > told.indexOf('alice-devtool'), `the notice after the output:\n${told}`);
  assert.match(
    told,
    new RegExp(`npm install -g --offline --no-update-notifier ./devtool-${NEWER}\\.tgz ./devtool-${process.platform}-${process.arch}-${NEWER}\\.tgz`),
  );
  assert.deepEqual(Object.keys(JSON.parse(readFileSync(stamps, 'utf8')) as object), [service.address]);

  assert.doesNotMatch(await inTerminal(['namespace', 'list']), /runs devtool/);
});
