import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ExitCode, UsageError } from '../../base/errors.ts';
import { commandSandbox, type CommandSandbox, failure, runCommand, success } from '../../../test/command-harness.ts';
import { type InProcessService, inProcessService, logIn } from '../../../test/in-process-service.ts';
import { checkRepository, pipelineName } from './run.ts';

test('the pipeline name: --name, else the repository given, else the folder', () => {
  assert.equal(pipelineName('Shop_API', undefined, '/home/a/x'), 'shop-api');
  assert.equal(pipelineName(undefined, 'https://git.example.com/team/web-shop.git', '/home/a/x'), 'web-shop');
  assert.equal(pipelineName(undefined, undefined, '/home/a/My App'), 'my-app');
  assert.throws(() => pipelineName('x'.repeat(41), undefined, '/'), /flag --name: letters, digits and '-', at most 40 characters/);
});

test('repositories: HTTPS without credentials; SSH refused with the HTTPS URL to use', () => {
  checkRepository('https://github.com/team/app.git', false);
  const refused = (url: string, fromCheckout: boolean) => {
    try {
      checkRepository(url, fromCheckout);
    } catch (err) {
      assert.ok(err instanceof UsageError);
      return err.message;
    }
    assert.fail(`${url} accepted`);
  };
  assert.equal(
    refused('git@github.com:team/app.git', false),
    'invalid value "git@github.com:team/app.git" for flag --repository: pipelines clone over HTTPS only (never SSH); ' +
      'e.g. --repository https://github.com/team/app.git',
  );
  assert.equal(
    refused('ssh://git@gitlab.example.com/group/app.git', true),
    "the checkout's origin remote (ssh://git@gitlab.example.com/group/app.git): pipelines clone over HTTPS only (never SSH); " +
      'e.g. --repository https://gitlab.example.com/group/app.git',
  );
  assert.match(refused('http://example.com/app.git', false), /HTTPS only \(never SSH\)$/);
  assert.match(
    refused('https://user:tok@github.com/team/app.git', false),
    /credentials do not belong in the URL; store the token on the service as the secret GIT_TOKEN_<HOST>/,
  );
});

describe('pipeline deploy and destroy, run against the service in this process', () => {
  let service: InProcessService;
  let sandbox: CommandSandbox;
  before(async () => {
    service = await inProcessService();
    sandbox = commandSandbox();
    await logIn(sandbox, service, service.alice);
  });
  after(() => service.close());

  const pipeline = (args: string[]) => runCommand(['pipeline', ...args], { sandbox, service: service.client });
  /** Every Job the service starts from now on ends at once, with this state and output. */
  const jobsEnd = (state: 'succeeded' | 'failed', log: string) => {
    const { cluster, jobs } = service.cluster;
    cluster.createRun = async (job, secrets) => {
      jobs.set(job.metadata!.name!, { job, secrets, log, state: state === 'succeeded' ? { state } : { state, reason: 'BackoffLimitExceeded', message: '' } });
    };
  };

  test('without --wait: the run is started, and the lines say how to follow it', async () => {
    const r = success(await pipeline(['deploy', '--repository', 'https://git.example.com/team/shop.git', '--name', 'started']));
    const [, job] = /^Pipeline "started" deploy started in namespace alice-devtool \(Job (devtool-run-started-\S+)\)\.\n/.exec(r.stdout) ?? [];
    assert.ok(job, r.stdout);
    assert.ok(r.stdout.endsWith(`\nFollow it with: kubectl logs -f job/${job} -n alice-devtool, or run it with --wait\n`), r.stdout);
    const again = await pipeline(['deploy', '--repository', 'https://git.example.com/team/shop.git', '--name', 'started']);
    assert.match(failure(again, ExitCode.failure), /pipeline started in namespace alice-devtool is running/);
  });

  test('--wait: the output as it comes, then the status line; --skip-if-exists skips a deployed one', async () => {
    jobsEnd('succeeded', 'devtool pipeline: commit 0123456789abcdef (branch main)\ndeployed it\n');
    const r = success(await pipeline(['deploy', '--repository', 'https://git.example.com/team/shop.git', '--wait', '--var', 'A=1']));
    assert.match(r.stdout, /deployed it\n$/);
    assert.match(r.stderr, /✓ pipeline "shop" deployed in namespace alice-devtool \(commit 0123456789ab\)\n$/);
    const skipped = success(await pipeline(['deploy', '--repository', 'https://git.example.com/team/shop.git', '--skip-if-exists']));
    assert.equal(skipped.stdout, 'Pipeline "shop" is already deployed in namespace alice-devtool (commit 0123456789ab): skipped\n');

    const destroyed = success(await pipeline(['destroy', '--name', 'shop', '--wait']));
    assert.match(destroyed.stderr, /✓ pipeline "shop" destroyed in namespace alice-devtool/);
  });

  test('a failed run with --wait: its last lines, then one error line, exit 1', async () => {
    jobsEnd('failed', 'cloning\nexit status 3: boom\n');
    const r = await pipeline(['deploy', '--repository', 'https://git.example.com/team/broken.git', '--wait']);
    assert.equal(r.code, ExitCode.failure);
    assert.ok(
      r.stderr.endsWith(
        'last lines of the run:\n  cloning\n  exit status 3: boom\n' +
          'Error: pipeline "broken" failed in namespace alice-devtool: the runner failed: exit status 3: boom\n',
      ),
      r.stderr,
    );
  });

  test('bad flags: one line, exit 2, no run started', async () => {
    const runs = service.cluster.jobs.size;
    assert.match(
      failure(await pipeline(['deploy', '--repository', 'https://git.example.com/a.git', '--var', 'NOEQUALS']), ExitCode.usage),
      /--var: expected KEY=VALUE/,
    );
    assert.match(failure(await pipeline(['deploy', '--repository', 'git@github.com:team/app.git']), ExitCode.usage), /HTTPS only \(never SSH\)/);
    assert.match(failure(await pipeline(['deploy']), ExitCode.usage), /no --repository, and .* is not a git checkout with an origin remote/);
    assert.equal(service.cluster.jobs.size, runs);
  });
});
