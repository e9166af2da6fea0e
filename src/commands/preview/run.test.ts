import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { ExitCode } from '../../base/errors.ts';
import { commandSandbox, type CommandSandbox, failure, runCommand, success } from '../../../test/command-harness.ts';
import { type InProcessService, inProcessService, logIn } from '../../../test/in-process-service.ts';
import { age, previewName } from './run.ts';

test('a preview is named by the user, else after the repository and the branch', () => {
  assert.equal(previewName('pr-7', undefined, undefined), 'pr-7');
  assert.throws(() => previewName('PR_7', undefined, undefined), /invalid preview name "PR_7": lowercase letters/);
  assert.throws(() => previewName('a'.repeat(64), undefined, undefined), /at most 63/);
  assert.equal(previewName(undefined, 'https://git.example.com/acme/Shop.git', 'feature/Login'), 'shop-feature-login');
  assert.equal(previewName(undefined, 'https://git.example.com/acme/shop', undefined), 'shop');
  assert.equal(previewName(undefined, 'https://x.example/a', 'b'.repeat(80)).length, 63);

  const checkout = mkdtempSync(join(tmpdir(), 'preview-name-'));
  mkdirSync(join(checkout, '.git'));
  writeFileSync(join(checkout, '.git', 'config'), '[remote "origin"]\n\turl = https://git.example.com/acme/movies.git\n');
  writeFileSync(join(checkout, '.git', 'HEAD'), 'ref: refs/heads/fix-42\n');
  assert.equal(previewName(undefined, undefined, undefined, checkout), 'movies-fix-42');
  assert.throws(() => previewName(undefined, undefined, undefined, mkdtempSync(join(tmpdir(), 'no-git-'))), /no preview name.*pass the name/);
  // The example is the command that was run.
  assert.throws(
    () => previewName(undefined, undefined, undefined, mkdtempSync(join(tmpdir(), 'no-git-')), 'preview endpoints'),
    /e\.g\. devtool preview endpoints my-preview$/,
  );
});

test('ages read like kubectl', () => {
  assert.deepEqual([age(5_000), age(125_000), age(3 * 3_600_000), age(50 * 3_600_000)], ['5s', '2m', '3h', '2d']);
});

describe('preview commands, run against the service in this process', () => {
  let service: InProcessService;
  let sandbox: CommandSandbox;
  before(async () => {
    service = await inProcessService({ endpointDomain: 'apps.example' });
    sandbox = commandSandbox();
    await logIn(sandbox, service, service.alice);
  });
  after(() => service.close());

  const preview = (args: string[]) => runCommand(['preview', ...args], { sandbox, service: service.client });

  test('deploy without --wait says how to follow; list shows it; endpoints are those of its Ingresses', async () => {
    const r = success(await preview(['deploy', 'shop-pr-7', '--repository', 'https://git.example.com/acme/shop.git', '--branch', 'pr-7']));
    assert.equal(
      r.stdout,
      'Preview environment "shop-pr-7" (personal) is being deployed in namespace shop-pr-7 from branch pr-7.\n' +
        'Follow it with: devtool preview list, or run it with --wait\n',
    );
    const list = success(await preview(['list']));
    assert.match(list.stdout, /^Name +Scope +Status +Branch +Age +Owner\nshop-pr-7 +personal +progressing +pr-7 +\S+ +alice\n$/);

    service.ingressHosts.set('shop-pr-7', ['shop-shop-pr-7.apps.example']);
    assert.equal(success(await preview(['endpoints', 'shop-pr-7'])).stdout, 'https://shop-shop-pr-7.apps.example\n');
    assert.deepEqual(JSON.parse(success(await preview(['endpoints', 'shop-pr-7', '-o', 'json'])).stdout), ['https://shop-shop-pr-7.apps.example']);
  });

  test("one that does not exist: the service's one line", async () => {
    assert.equal(failure(await preview(['endpoints', 'nope']), ExitCode.failure), 'Error: no preview environment nope');
  });

  test('bad names and flags: one line, exit 2', async () => {
    assert.match(failure(await preview(['deploy', 'PR_7', '--repository', 'https://git.example.com/a.git']), ExitCode.usage), /invalid preview name "PR_7"/);
    assert.match(
      failure(await preview(['deploy', 'pr-8', '--repository', 'https://git.example.com/a.git', '--sourceUrl', 'http://x']), ExitCode.usage),
      /invalid value "http:\/\/x" for flag --sourceUrl/,
    );
    assert.match(failure(await preview(['destroy']), ExitCode.usage), /no preview name.*e\.g\. devtool preview destroy my-preview$/);
  });
});
