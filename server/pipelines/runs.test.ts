import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { PipelineDeployBody } from '../../api/routes.ts';
import { ApiError } from '../errors.ts';
import { NamespaceGone } from './cluster.ts';
import { fakeCluster } from './fake-cluster.ts';
import { clonedFrom, deploy, destroy, getRun, gitTokenSecretName, type RunSettings } from './runs.ts';

const settings = (secrets: Record<string, string> = {}, user = 'alice'): RunSettings => ({
  user,
  runnerImage: 'runner:1',
  clusterCa: 'CLUSTER-CA',
  frontDoorCa: 'FRONT-DOOR-CA',
  labels: {},
  issueToken: async (seconds) => `kube-token-${seconds}`,
  storedSecrets: async () => secrets,
  now: () => new Date('2026-01-01T00:00:00Z'),
});

const request: PipelineDeployBody = {
  namespace: 'alice-devtool',
  name: 'shop',
  repository: 'https://git.example.com/shop.git',
  variables: ['A=1'],
  timeoutSeconds: 600,
  skipIfExists: false,
};

const refusal = async (p: Promise<unknown>, status: number, pattern: RegExp) => {
  await assert.rejects(p, (err: unknown) => err instanceof ApiError && err.statusCode === status && pattern.test(err.message));
};

test('the git token of the host goes to the mounted credentials only; other stored secrets become the environment', async () => {
  const { cluster, jobs } = fakeCluster();
  assert.equal(gitTokenSecretName('https://git.example.com/shop.git'), 'GIT_TOKEN_GIT_EXAMPLE_COM');
  const run = await deploy(cluster, settings({ GIT_TOKEN_GIT_EXAMPLE_COM: 'tok-123', GIT_TOKEN_OTHER_HOST: 'other', DB_PASSWORD: 'pw' }), request);
  assert.equal(run.status, 'progressing');
  const { job, secrets } = jobs.get(run.job)!;
  assert.ok(!JSON.stringify(job).includes('tok-123'), 'the token is not in the Job spec');
  const [credentials, env] = secrets;
  assert.equal(credentials!.stringData!['git-token'], 'tok-123');
  assert.equal(credentials!.stringData!['kube-token'], 'kube-token-900');
  assert.deepEqual(env!.stringData, { DB_PASSWORD: 'pw' });
  // The --var values: mounted files too, in order, none in the spec.
  assert.equal(credentials!.stringData!['var-000'], 'A=1');
  assert.ok(!JSON.stringify(job).includes('A=1'), 'a --var value is not in the Job spec');
});

test('the commit line names the commit and the branch cloned; a detached HEAD no branch', () => {
  assert.deepEqual(clonedFrom('devtool pipeline: cloning x\ndevtool pipeline: commit abc123 (branch main)\n'), { commit: 'abc123', branch: 'main' });
  assert.deepEqual(clonedFrom('devtool pipeline: commit abc123 (branch HEAD)\n'), { commit: 'abc123' });
  assert.deepEqual(clonedFrom('fatal: repository not found\n'), {});
});

test('never two runs at once; a finished run is recorded with its commit, and its Job removed', async () => {
  const { cluster, jobs, records } = fakeCluster();
  const first = await deploy(cluster, settings(), request);
  await refusal(deploy(cluster, settings(), request), 409, /pipeline shop in namespace alice-devtool is running/);
  Object.assign(jobs.get(first.job)!, { state: { state: 'succeeded' }, log: 'devtool pipeline: commit abc123 (branch main)\nok\n' });
  const done = await getRun(cluster, 'alice-devtool', 'shop', new Date('2026-01-01T00:01:00Z'));
  assert.equal(done.status, 'deployed');
  assert.equal(done.commit, 'abc123');
  assert.equal(done.finishedAt, '2026-01-01T00:01:00.000Z');
  assert.ok(!jobs.has(first.job));
  assert.equal(records.get('alice-devtool/shop')!.record.status, 'deployed');
  const skipped = await deploy(cluster, settings(), { ...request, skipIfExists: true });
  assert.equal(skipped.skipped, true);
  assert.equal(jobs.size, 0);
});

test('a Job stopped by its deadline is a timeout; a failed one names its last line', async () => {
  const { cluster, jobs } = fakeCluster();
  const run = await deploy(cluster, settings(), request);
  Object.assign(jobs.get(run.job)!, { state: { state: 'failed', reason: 'DeadlineExceeded', message: '' } });
  const timedOut = await getRun(cluster, 'alice-devtool', 'shop', new Date());
  assert.equal(timedOut.status, 'error');
  assert.match(timedOut.message!, /timed out/);
  const again = await deploy(cluster, settings(), request);
  Object.assign(jobs.get(again.job)!, { state: { state: 'failed', reason: 'BackoffLimitExceeded', message: '' }, log: 'a\nexit status 3: boom\n' });
  assert.match((await getRun(cluster, 'alice-devtool', 'shop', new Date())).message!, /the runner failed: exit status 3: boom/);
});

test('destroy runs with the recorded repository, and a successful one leaves no record', async () => {
  const { cluster, jobs, records } = fakeCluster();
  await refusal(destroy(cluster, settings(), 'alice-devtool', 'shop', { volumes: true, timeoutSeconds: 60 }), 404, /no pipeline shop/);
  const run = await deploy(cluster, settings(), { ...request, branch: 'dev', file: 'app/devtool.yml' });
  jobs.get(run.job)!.state = { state: 'succeeded' };
  const d = await destroy(cluster, settings(), 'alice-devtool', 'shop', { volumes: true, timeoutSeconds: 60 });
  assert.equal(d.status, 'destroying');
  const container = jobs.get(d.job)!.job.spec!.template.spec!.containers[0]!;
  assert.deepEqual(container.args, ['destroy', '--name', 'shop', '--namespace', 'alice-devtool', '--volumes', '--wait', '--timeout', '60s']);
  // The manifest deploy was given (the script passes --file when the checkout has it), on the same branch.
  const env = Object.fromEntries((container.env ?? []).map((e) => [e.name, e.value]));
  assert.deepEqual([env.DESTROY_FILE, env.BRANCH], ['app/devtool.yml', 'dev']);
  jobs.get(d.job)!.state = { state: 'succeeded' };
  assert.equal((await getRun(cluster, 'alice-devtool', 'shop', new Date())).status, 'destroyed');
  assert.equal(records.size, 0);
  assert.equal(jobs.size, 0);
  await refusal(getRun(cluster, 'alice-devtool', 'shop', new Date()), 404, /no pipeline/);
});

test("deploy's variables are kept for destroy: a redeploy replaces them, destroy copies them, a successful destroy removes them", async () => {
  const { cluster, jobs, variables } = fakeCluster();
  const tricky = `PASSWORD=a b "c" 'd' $HOME x=y`;
  const first = await deploy(cluster, settings(), { ...request, variables: ['A=1', tricky] });
  assert.deepEqual(variables.get('alice-devtool/shop'), ['A=1', tricky]);
  jobs.get(first.job)!.state = { state: 'succeeded' };
  const second = await deploy(cluster, settings(), { ...request, variables: ['B=2'] });
  assert.deepEqual(variables.get('alice-devtool/shop'), ['B=2'], 'a redeploy replaces them');
  jobs.get(second.job)!.state = { state: 'succeeded' };

  const d = await destroy(cluster, settings(), 'alice-devtool', 'shop', { volumes: false, timeoutSeconds: 60 });
  const { job, secrets } = jobs.get(d.job)!;
  assert.equal(secrets[0]!.stringData!['var-000'], 'B=2', "copied into the destroy run's Secret");
  assert.equal(secrets[0]!.stringData!['var-001'], undefined);
  assert.ok(!JSON.stringify(job).includes('B=2'), 'no value in the Job spec');
  assert.deepEqual(variables.get('alice-devtool/shop'), ['B=2'], 'kept while destroy runs (it may fail and be run again)');

  jobs.get(d.job)!.state = { state: 'failed', reason: 'BackoffLimitExceeded', message: '' };
  assert.equal((await getRun(cluster, 'alice-devtool', 'shop', new Date())).status, 'error');
  assert.deepEqual(variables.get('alice-devtool/shop'), ['B=2'], 'a failed destroy keeps them for the next one');
  const again = await destroy(cluster, settings(), 'alice-devtool', 'shop', { volumes: false, timeoutSeconds: 60 });
  assert.equal(jobs.get(again.job)!.secrets[0]!.stringData!['var-000'], 'B=2');
  jobs.get(again.job)!.state = { state: 'succeeded' };
  assert.equal((await getRun(cluster, 'alice-devtool', 'shop', new Date())).status, 'destroyed');
  assert.equal(variables.size, 0, 'gone with the record');

  // A deploy without variables keeps none: a later destroy gets none.
  const bare = await deploy(cluster, settings(), { ...request, variables: [] });
  assert.equal(variables.size, 0);
  jobs.get(bare.job)!.state = { state: 'succeeded' };
  const d2 = await destroy(cluster, settings(), 'alice-devtool', 'shop', { volumes: false, timeoutSeconds: 60 });
  assert.ok(!Object.keys(jobs.get(d2.job)!.secrets[0]!.stringData!).some((k) => k.startsWith('var-')));
});

test("reuseParams redeploys with the last deploy's repository, branch, file and variables; what is given wins", async () => {
  const { cluster, jobs } = fakeCluster();
  const s = settings();
  const envOf = (job: string) => Object.fromEntries((jobs.get(job)!.job.spec!.template.spec!.containers[0]!.env ?? []).map((e) => [e.name, e.value]));
  const secretOf = (job: string) => jobs.get(job)!.secrets[0]!.stringData!;
  await refusal(deploy(cluster, s, { ...request, reuseParams: true }), 404, /no pipeline shop in namespace alice-devtool to redeploy/);
  const { repository: _, ...withoutRepository } = request;
  await refusal(deploy(cluster, s, withoutRepository), 400, /body.repository: required/);

  const first = await deploy(cluster, s, { ...request, branch: 'feature', file: 'deploy/app.yml', variables: ['A=1', 'B=two words'] });
  jobs.get(first.job)!.state = { state: 'succeeded' };
  const again = await deploy(cluster, s, { ...withoutRepository, variables: [], reuseParams: true });
  assert.deepEqual([again.repository, again.branch, again.file], ['https://git.example.com/shop.git', 'feature', 'deploy/app.yml']);
  assert.equal(envOf(again.job).BRANCH, 'feature');
  assert.deepEqual([secretOf(again.job)['var-000'], secretOf(again.job)['var-001']], ['A=1', 'B=two words']);

  jobs.get(again.job)!.state = { state: 'succeeded' };
  const other = await deploy(cluster, s, { ...withoutRepository, branch: 'main', variables: ['C=3'], reuseParams: true });
  assert.equal(other.branch, 'main');
  assert.equal(other.file, 'deploy/app.yml');
  assert.deepEqual([secretOf(other.job)['var-000'], secretOf(other.job)['var-001']], ['C=3', undefined]);
});

test("with the service's URL, the run gets a short-lived API token of the user, revoked when the run ends, and no cluster token of its own", async () => {
  const { cluster, jobs, endedTokens } = fakeCluster();
  const issued: { seconds: number; name: string }[] = [];
  const s: RunSettings = {
    ...settings(),
    service: {
      url: 'https://devtool.example',
      issueApiToken: async (seconds, name) => {
        issued.push({ seconds, name });
        return { token: 'dvt_run-token', id: 'run-token-id' };
      },
    },
  };
  const run = await deploy(cluster, s, { ...request, timeoutSeconds: 900 });
  assert.deepEqual(issued, [{ seconds: 1200, name: `pipeline shop in alice-devtool (run ${run.job.split('-').at(-1)})` }]);
  const job = jobs.get(run.job)!;
  assert.equal(job.secrets[0]!.stringData!['api-token'], 'dvt_run-token');
  // The runner asks the service for short-lived cluster tokens (bound to the run's API token).
  assert.equal(job.secrets[0]!.stringData!['kube-token'], undefined);
  assert.deepEqual(endedTokens, []);
  job.state = { state: 'succeeded' };
  await getRun(cluster, 'alice-devtool', 'shop', new Date());
  assert.deepEqual(endedTokens, ['alice/run-token-id'], 'revoked once the end is recorded');
  const env = Object.fromEntries((job.job.spec!.template.spec!.containers[0]!.env ?? []).map((e) => [e.name, e.value]));
  assert.equal(env.SERVICE_URL, 'https://devtool.example');
  assert.equal(env.DEVTOOL_KUBE_SERVER, 'https://kubernetes.default.svc');
  assert.ok(!JSON.stringify(job.job).includes('dvt_run-token'), 'the token is in no Job spec');
});

test('a Job not there yet just after its record was written is starting, not gone (another replica is creating it)', async () => {
  const { cluster, jobs } = fakeCluster();
  const started = new Date('2026-01-01T00:00:00Z');
  const run = await deploy(cluster, { ...settings(), now: () => started }, request);
  jobs.delete(run.job); // as seen by a replica reading between the record and the Job
  const soon = await getRun(cluster, 'alice-devtool', 'shop', new Date(started.getTime() + 5_000));
  assert.equal(soon.status, 'progressing');
  const late = await getRun(cluster, 'alice-devtool', 'shop', new Date(started.getTime() + 120_000));
  assert.equal(late.status, 'error');
  assert.match(late.message ?? '', /is gone before its result was recorded/);
});

test("the records are the service's: reading one needs the right to read the namespace, running one the right to run Jobs there", async () => {
  const { cluster, access } = fakeCluster();
  await deploy(cluster, settings(), request);
  access.set('alice-devtool', 'none');
  await refusal(getRun(cluster, 'alice-devtool', 'shop', new Date()), 403, /you may not read pipelines there/);
  await refusal(deploy(cluster, settings({}, 'mallory'), request), 403, /you may not run pipelines there/);
  access.set('alice-devtool', 'read');
  assert.equal((await getRun(cluster, 'alice-devtool', 'shop', new Date())).status, 'progressing');
  await refusal(destroy(cluster, settings({}, 'mallory'), 'alice-devtool', 'shop', { volumes: false, timeoutSeconds: 60 }), 403, /may not run/);
});

test("a run's parameters act for the user who gave them: another user can neither destroy with them nor redeploy them", async () => {
  const { cluster, jobs } = fakeCluster();
  const run = await deploy(cluster, settings(), { ...request, branch: 'main' });
  jobs.get(run.job)!.state = { state: 'succeeded' };
  const { repository: _, ...withoutRepository } = request;
  await refusal(deploy(cluster, settings({}, 'bob'), { ...withoutRepository, reuseParams: true }), 403, /deployed by alice: only alice can redeploy it/);
  await refusal(destroy(cluster, settings({}, 'bob'), 'alice-devtool', 'shop', { volumes: false, timeoutSeconds: 60 }), 403, /only alice can destroy it/);
  // Bob's own parameters are his to run, as Bob.
  const bobs = await deploy(cluster, settings({}, 'bob'), { ...request, repository: 'https://git.example.com/bob.git' });
  assert.equal(bobs.repository, 'https://git.example.com/bob.git');
  assert.equal('actor' in bobs, false, 'the actor is the service’s, not part of the answer');
});

test('a namespace deleted between the rights check and the record is a 404, not an internal error', async () => {
  const { cluster } = fakeCluster();
  const gone = {
    ...cluster,
    putRecord: () => Promise.reject(new NamespaceGone('namespace alice-devtool does not exist (or is being deleted)')),
  };
  await refusal(deploy(gone, settings(), request), 404, /^namespace alice-devtool does not exist \(or is being deleted\)$/);
});
