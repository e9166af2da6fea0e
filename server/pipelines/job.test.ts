import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { assertGolden } from '../../test/golden.ts';
import { type RunnerJobInput, runnerArgs, runnerJob } from './job.ts';

const dir = join(import.meta.dirname, 'testdata');
const base: RunnerJobInput = {
  action: 'deploy',
  name: 'shop',
  namespace: 'alice-devtool',
  runId: 'a1b2c3',
  image: 'localhost:5000/devtool-runner:0.1.0-0123456789abcdef@sha256:00',
  repository: 'https://git.example.com/team/shop.git',
  variables: [],
  volumes: false,
  timeoutSeconds: 300,
  labels: { 'app.kubernetes.io/managed-by': 'devtool-service' },
};

test('a deploy Job: branch and file as arguments, no --var value in it, the deadline from --timeout', () => {
  const job = runnerJob({ ...base, branch: 'feature/x', file: 'deploy/devtool.yml', variables: ['A=1', 'B=two words'] });
  assertGolden(join(dir, 'deploy-job.json'), `${JSON.stringify(job, null, 2)}\n`);
  assert.equal(job.spec?.activeDeadlineSeconds, 300);
  assert.ok(!JSON.stringify(job).includes('two words'), 'a --var value is not in the spec');
});

test('a destroy Job on the default branch, with --volumes, in the folder of the manifest deploy was given', () => {
  const job = runnerJob({ ...base, action: 'destroy', volumes: true, timeoutSeconds: 60, file: 'deploy/devtool.yml' });
  assertGolden(join(dir, 'destroy-job.json'), `${JSON.stringify(job, null, 2)}\n`);
  assert.deepEqual(
    job.spec?.template.spec?.containers[0]?.env?.find((e) => e.name === 'MANIFEST_DIR'),
    { name: 'MANIFEST_DIR', value: 'deploy' },
  );
});

test('user-given values never enter the script: a hostile branch or variable stays one argument', () => {
  const hostile = { ...base, branch: '$(touch /tmp/x)', variables: ['X=$(id); rm -rf /'] };
  const job = runnerJob(hostile);
  const container = job.spec!.template.spec!.containers[0]!;
  assert.ok(!container.command!.join(' ').includes('touch'));
  assert.ok(!container.command!.join(' ').includes('rm -rf'));
  assert.deepEqual(
    container.env!.find((e) => e.name === 'BRANCH'),
    { name: 'BRANCH', value: '$(touch /tmp/x)' },
  );
  assert.ok(!JSON.stringify(job).includes('rm -rf'), 'a --var value is not in the spec');
  assert.deepEqual(runnerArgs(hostile).slice(-3), ['--wait', '--timeout', '300s']);
});

test('the pod never gets the namespace default account token, and git only speaks HTTPS', () => {
  const job = runnerJob(base);
  const pod = job.spec!.template.spec!;
  assert.equal(pod.automountServiceAccountToken, false);
  assert.equal(pod.containers[0]!.env!.find((e) => e.name === 'GIT_ALLOW_PROTOCOL')?.value, 'https');
  assert.equal(job.spec?.backoffLimit, 0);
});
