import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { assertGolden } from '../../test/golden.ts';
import { recordSecretName, variablesSecretName } from '../store/kubernetes-runs.ts';
import { credentialsSecretName, envSecretName, jobName, LOAD_VARIABLES, type RunnerJobInput, runnerArgs, runnerJob, variableKey } from './job.ts';

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
  const job = runnerJob({
    ...base,
    branch: 'feature/x',
    file: 'deploy/devtool.yml',
    variables: ['A=1', 'B=two words'],
    endpointDomain: 'devtool.test',
    serviceUrl: 'https://devtool.devtool.test',
  });
  assertGolden(join(dir, 'deploy-job.json'), `${JSON.stringify(job, null, 2)}\n`);
  assert.equal(job.spec?.activeDeadlineSeconds, 300);
  assert.ok(!JSON.stringify(job).includes('two words'), 'a --var value is not in the spec');
});

test("the service's ingress class reaches devtool in the runner as DEVTOOL_INGRESS_CLASS, only when it has one", () => {
  const env = (input: RunnerJobInput) => runnerJob(input).spec?.template.spec?.containers[0]?.env ?? [];
  assert.deepEqual(
    env({ ...base, ingressClass: 'traefik' }).find((e) => e.name === 'DEVTOOL_INGRESS_CLASS'),
    { name: 'DEVTOOL_INGRESS_CLASS', value: 'traefik' },
  );
  assert.equal(
    env(base).find((e) => e.name === 'DEVTOOL_INGRESS_CLASS'),
    undefined,
  );
});

test('a destroy Job on the default branch, with --volumes, reading the manifest deploy was given', () => {
  const job = runnerJob({ ...base, action: 'destroy', volumes: true, timeoutSeconds: 60, file: 'deploy/preview.yml' });
  assertGolden(join(dir, 'destroy-job.json'), `${JSON.stringify(job, null, 2)}\n`);
  assert.deepEqual(job.spec?.template.spec?.containers[0]?.args, [
    'destroy',
    '--name',
    'shop',
    '--namespace',
    'alice-devtool',
    '--volumes',
    '--wait',
    '--timeout',
    '60s',
  ]);
  // The file goes to the script, which passes --file when the checkout has it (a destroy runs on even
  // when the branch, or the file, is gone).
  assert.deepEqual(
    job.spec?.template.spec?.containers[0]?.env?.find((e) => e.name === 'DESTROY_FILE'),
    { name: 'DESTROY_FILE', value: 'deploy/preview.yml' },
  );
});

test('with the longest pipeline name, every name and label value of the run fits Kubernetes', () => {
  const name = `a${'b'.repeat(38)}z`; // PipelineName: 40 characters at most
  assert.equal(name.length, 40);
  const runId = 'a1b2c3';
  const job = runnerJob({ ...base, name, runId, namespace: `n${'s'.repeat(62)}` });
  // A Job's name becomes its pods' job-name label value (63 at most, as every label value).
  const label = /^([a-z0-9A-Z]([a-z0-9A-Z._-]{0,61}[a-z0-9A-Z])?)?$/;
  const dns1123Label = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;
  const dns1123Subdomain = (s: string) => s.length <= 253 && s.split('.').every((part) => dns1123Label.test(part));
  assert.match(job.metadata!.name!, dns1123Label);
  assert.ok(jobName(name, runId).length <= 63, jobName(name, runId));
  for (const [k, v] of Object.entries({ ...job.metadata!.labels, ...job.spec!.template.metadata!.labels, 'job-name': job.metadata!.name! })) {
    assert.match(v, label, `label ${k}=${v}`);
  }
  for (const secret of [
    credentialsSecretName(name, runId),
    envSecretName(name, runId),
    variablesSecretName('a'.repeat(63), name),
    recordSecretName('a'.repeat(63), name),
  ]) {
    assert.ok(dns1123Subdomain(secret), secret);
  }
  const volumes = job.spec!.template.spec!.volumes!;
  assert.equal(volumes.find((v) => v.name === 'credentials')?.secret?.secretName, credentialsSecretName(name, runId));
});

test("destroy's runner exports each variable whole (spaces, quotes, $, =); deploy passes them as --var", () => {
  const d = mkdtempSync(join(tmpdir(), 'pl-vars-'));
  try {
    const tricky = `PASSWORD=a  b "c" 'd' $HOME \\ x=y $(id)`;
    writeFileSync(join(d, variableKey(0)), 'GREETING=hello');
    writeFileSync(join(d, variableKey(1)), tricky);
    const run = (action: string, after: string) =>
      spawnSync('/bin/sh', ['-c', `set -eu\nd=$0\n${LOAD_VARIABLES}${after}`, d, action, '--name', 'shop'], {
        encoding: 'utf8',
        env: { PATH: process.env.PATH },
      });
    const destroyed = run('destroy', 'printf "%s|" "$@"; printf "%s|%s" "$GREETING" "$PASSWORD"');
    assert.equal(destroyed.status, 0, destroyed.stderr);
    assert.equal(
      destroyed.stdout,
      `devtool pipeline: with 2 variable(s) of the deploy from the run's Secret\ndestroy|--name|shop|hello|${tricky.slice('PASSWORD='.length)}`,
    );
    const deployed = run('deploy', 'printf "%s|" "$@"');
    assert.equal(deployed.status, 0, deployed.stderr);
    assert.equal(deployed.stdout, `devtool pipeline: with 2 --var value(s) from the run's Secret\ndeploy|--name|shop|--var|GREETING=hello|--var|${tricky}|`);
  } finally {
    rmSync(d, { recursive: true, force: true });
  }
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
