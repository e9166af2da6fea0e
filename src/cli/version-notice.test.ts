/**
 * The newer-version notice as a user meets it: commands run in this process through runCli against
 * the real service program (test/in-process-service.ts) whose configured version is newer than
 * this CLI's, the clock injected.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { ExitCode } from '../base/errors.ts';
import { hostPlatform } from '../base/platform.ts';
import { VERSION } from '../version.ts';
import { type CommandSandbox, commandSandbox, failure, runCommand, success, TEST_NOW } from '../../test/command-harness.ts';
import { type InProcessService, inProcessService, logIn, SERVICE_URL } from '../../test/in-process-service.ts';

const NEWER = '99.0.0';
const HOUR = 60 * 60 * 1000;
const at = (hours: number) => () => new Date(TEST_NOW.getTime() + hours * HOUR);

describe('the notice of a newer devtool on the service', () => {
  let service: InProcessService;
  before(async () => {
    service = await inProcessService({ version: NEWER });
  });
  after(() => service.close());

  async function loggedIn(): Promise<CommandSandbox> {
    const sandbox = commandSandbox();
    // No terminal: logging in tells nothing, and stamps nothing.
    await logIn(sandbox, service, service.alice);
    return sandbox;
  }
  const run = (sandbox: CommandSandbox, args: string[], o: { terminal?: boolean; now?: () => Date } = {}) =>
    runCommand(args, { sandbox, service: service.client, terminal: o.terminal ?? true, env: { NO_COLOR: '1' }, ...(o.now ? { now: o.now } : {}) });

  test('a command on a terminal tells it once, after its output, and again a day later', async () => {
    const sandbox = await loggedIn();
    const first = success(await run(sandbox, ['namespace', 'list']));
    assert.match(first.stdout, /alice-devtool/);
    assert.equal(
      first.stderr,
      `warn: the devtool service at ${SERVICE_URL} runs devtool ${NEWER}, this CLI is ${VERSION}: install ${NEWER} from its release with ` +
        `npm install -g --offline --no-update-notifier ./devtool-${NEWER}.tgz ./devtool-${hostPlatform}-${process.arch}-${NEWER}.tgz\n`,
    );
    assert.equal(success(await run(sandbox, ['namespace', 'list'], { now: at(23) })).stderr, '');
    assert.match(success(await run(sandbox, ['namespace', 'list'], { now: at(24) })).stderr, /^warn: the devtool service .* runs devtool 99\.0\.0/);
    const stamps = JSON.parse(readFileSync(join(sandbox.devtoolHome, 'version-notice.json'), 'utf8')) as Record<string, string>;
    assert.deepEqual(stamps, { [SERVICE_URL]: at(24)().toISOString() });
  });

  test('not told where no person reads it: no terminal, --loglevel error, an --output format', async () => {
    const sandbox = await loggedIn();
    assert.equal(success(await run(sandbox, ['namespace', 'list'], { terminal: false })).stderr, '');
    assert.equal(success(await run(sandbox, ['--loglevel', 'error', 'namespace', 'list'])).stderr, '');
    success(
      await run(sandbox, ['preview', 'deploy', 'shop-pr-1', '--repository', 'https://git.example.com/acme/shop.git', '--branch', 'pr-1'], { terminal: false }),
    );
    const json = success(await run(sandbox, ['preview', 'endpoints', 'shop-pr-1', '--output', 'json']));
    assert.deepEqual([json.stdout, json.stderr], ['[]\n', '']);
    // None of those used up the day's notice.
    assert.equal(existsSync(join(sandbox.devtoolHome, 'version-notice.json')), false);
    assert.match(success(await run(sandbox, ['namespace', 'list'])).stderr, /runs devtool 99\.0\.0/);
  });

  test('a failed command keeps its one error line', async () => {
    const sandbox = await loggedIn();
    failure(await run(sandbox, ['namespace', 'delete', 'not-mine']), ExitCode.failure);
    assert.match(success(await run(sandbox, ['namespace', 'list'])).stderr, /runs devtool 99\.0\.0/);
  });
});

test('a service that runs this version tells nothing', async () => {
  const service = await inProcessService({ version: VERSION });
  try {
    const sandbox = commandSandbox();
    await logIn(sandbox, service, service.alice);
    const r = success(await runCommand(['namespace', 'list'], { sandbox, service: service.client, terminal: true, env: { NO_COLOR: '1' } }));
    assert.equal(r.stderr, '');
  } finally {
    await service.close();
  }
});
