/**
 * `devtool pipeline deploy|destroy` against the service installed by its chart (`npm run
 * service:up`), with repositories the test makes on the git server inside the cluster
 * (scripts/git-server.sh, HTTPS through the front door): a manifest application whose deploy
 * command uses kubectl; --wait streaming the runner's output while it runs; a failing deploy; a
 * timeout the cluster enforces; no two runs at once; --skip-if-exists; destroy leaving nothing; a
 * private repository with a stored token that never shows; the service's pods deleted mid-run.
 *
 * DEVTOOL_E2E_SERVICE_RELEASE=<name> runs it against a release of the service of its own
 * (service-up.sh's DEVTOOL_SERVICE_RELEASE: https://devtool-<name>.devtool.test), so that another
 * checkout's service:up on the same cluster cannot replace the service during the run.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { dirname, join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import * as k8s from '@kubernetes/client-node';
import { ensureCluster } from '../../cluster/test-cluster.ts';
import { createSandbox, repoRoot, runDevtool, spawnDevtool } from './cli.ts';
import { type Fetched, httpsGet } from './installed-service.ts';
import { waitFor } from './wait.ts';

const RELEASE = process.env.DEVTOOL_E2E_SERVICE_RELEASE || 'devtool';
const URL_ = RELEASE === 'devtool' ? 'https://devtool.devtool.test' : `https://devtool-${RELEASE}.devtool.test`;
const CA_FILE = join(process.env.DEVTOOL_FRONT_DOOR_STATE ?? '/var/lib/devtool-front-door', 'ca.crt');
const run = randomBytes(3).toString('hex');
const user = `e2epl${run}`;
const NS = `${user}-devtool`;
const GIT_TOKEN = `gt-${randomBytes(12).toString('hex')}`;

let core: k8s.CoreV1Api;
let batch: k8s.BatchV1Api;
let apiToken: string;
let env: NodeJS.ProcessEnv;
let work: string;

function script(path: string, args: string[], timeout = 900_000): string {
  const r = spawnSync('bash', [join(repoRoot, path), ...args], { encoding: 'utf8', timeout });
  assert.equal(r.status, 0, `${path} ${args.join(' ')} failed:\n${r.stderr}`);
  return r.stdout.trim().split('\n').at(-1)!;
}

/** A repository on the git server from a manifest's text (at `file`: devtool.yml by default). */
function repository(name: string, manifest: string, token?: string, file = 'devtool.yml'): string {
  const dir = join(work, name);
  mkdirSync(join(dir, dirname(file)), { recursive: true });
  writeFileSync(join(dir, file), manifest);
  return script('scripts/git-server.sh', ['repo', `${name}-${run}`, dir, ...(token ? ['--token', token] : [])]);
}

const devtool = (args: string[], timeoutMs = 240_000) => runDevtool(args, { env, timeoutMs, cwd: work });

/** Stores a secret as a user does, through the service's API; answers the HTTP status. */
function putSecret(name: string, value: string): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    const req = httpsRequest(
      `${URL_}/api/v1/secrets/${name}`,
      { method: 'PUT', ca: readFileSync(CA_FILE), headers: { authorization: `Bearer ${apiToken}`, 'content-type': 'application/json' } },
      (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      },
    );
    req.on('error', reject);
    req.end(JSON.stringify({ value }));
  });
}

async function objectsLeft(): Promise<string[]> {
  const names = (items: { metadata?: { name?: string } }[], kind: string) => items.map((i) => `${kind}/${i.metadata?.name}`);
  return [
    ...names((await core.listNamespacedConfigMap({ namespace: NS })).items, 'configmap').filter((n) => n !== 'configmap/kube-root-ca.crt'),
    ...names((await core.listNamespacedSecret({ namespace: NS })).items, 'secret'),
    ...names((await core.listNamespacedPod({ namespace: NS })).items, 'pod'),
    ...names((await batch.listNamespacedJob({ namespace: NS })).items, 'job'),
  ];
}

before(async () => {
  const { kubeconfigPath } = await ensureCluster();
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(kubeconfigPath);
  core = kc.makeApiClient(k8s.CoreV1Api);
  batch = kc.makeApiClient(k8s.BatchV1Api);
  process.env.DEVTOOL_SERVICE_RELEASE = RELEASE === 'devtool' ? '' : RELEASE;
  process.env.DEVTOOL_SERVICE_NAMESPACE = RELEASE;
  assert.equal(script('scripts/service-up.sh', []), URL_);
  assert.equal(script('scripts/git-server.sh', ['up']), 'https://git-server.devtool.test');
  const made = spawnSync('npm', ['run', '--silent', 'service:user', '--', user], { cwd: repoRoot, encoding: 'utf8', timeout: 120_000 });
  assert.equal(made.status, 0, made.stderr);
  apiToken = made.stdout.trim().split('\n').at(-1)!;
  const sb = createSandbox();
  work = join(sb.root, 'work');
  mkdirSync(work);
  env = { ...sb.env, NODE_EXTRA_CA_CERTS: CA_FILE };
  const use = runDevtool(['context', 'use', URL_, '--token', apiToken], { env, timeoutMs: 30_000 });
  assert.equal(use.code, 0, use.stderr);
});

after(async () => {
  if (!core) return;
  await core.deleteNamespace({ name: NS }).catch(() => {});
  await core.deleteNamespacedServiceAccount({ name: `user-${user}`, namespace: RELEASE }).catch(() => {});
});

describe('pipeline deploy and destroy on the service', () => {
  test("a --file manifest using kubectl: --wait streams its output, then the status; destroy has deploy's --var, leaves nothing", async () => {
    // Not devtool.yml: destroy must read the file deploy was given. The destroy command's name is
    // expanded when the manifest is loaded: it shows the --var values reached destroy's environment.
    const note = `a "b" 'c' $d=e  f`;
    const repo = repository(
      'kubectl-app',
      [
        'deploy:',
        '  - kubectl create configmap pipeline-made --from-literal=run=yes --from-literal=greeting=$GREETING --from-literal=stored=$STORED_VALUE ' +
          '--dry-run=client -o yaml | kubectl apply -f -',
        '  - echo "first line"; sleep 6; echo "last line"',
        'destroy:',
        '  - name: delete the configmap of ${GREETING} [${NOTE}]',
        '    command: kubectl delete configmap pipeline-made && echo "deleted for $GREETING"',
        '',
      ].join('\n'),
      undefined,
      'deploy/preview.yml',
    );
    assert.equal(await putSecret('STORED_VALUE', 'from-the-service'), 204);
    const started = Date.now();
    const child = spawnDevtool(
      ['pipeline', 'deploy', '--repository', repo, '--name', 'kubectl-app', '--file', 'deploy/preview.yml', '--wait', '--timeout', '3m'].concat([
        '--var',
        'GREETING=hello',
        '--var',
        `NOTE=${note}`,
      ]),
      { env, cwd: work },
    );
    const arrivals: { line: string; at: number }[] = [];
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => {
      stdout += d;
      for (const line of d.toString().split('\n').filter(Boolean)) arrivals.push({ line, at: Date.now() });
    });
    child.stderr.on('data', (d: Buffer) => {
      stderr += d;
    });
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    const ended = Date.now();
    assert.equal(code, 0, `${stdout}\n${stderr}`);
    const first = arrivals.find((a) => a.line.includes('first line'));
    assert.ok(first, stdout);
    // The first line came while the runner slept: at least 5 s before the command ended.
    assert.ok(ended - first.at >= 5000, `"first line" arrived ${ended - first.at} ms before the end (streamed, not at the end)`);
    assert.match(stdout, /devtool pipeline: commit [0-9a-f]{40} \(branch main\)/);
    // A --var value (it may be a password) is in no log line, nor in the Job: the run's Secret has it.
    assert.match(stdout, /devtool pipeline: with 2 --var value\(s\) from the run's Secret/);
    assert.ok(!stdout.includes('GREETING=hello') && !stderr.includes('GREETING=hello'), stdout);
    assert.match(stderr, /✓ pipeline "kubectl-app" deployed in namespace e2epl\w+-devtool \(commit [0-9a-f]{12}\)/);
    console.log(`pipeline deploy --wait of a kubectl app: ${((ended - started) / 1000).toFixed(1)} s`);
    const made = await core.readNamespacedConfigMap({ name: 'pipeline-made', namespace: NS });
    // --var and the user's stored secrets reach the manifest's commands.
    assert.deepEqual(made.data, { run: 'yes', greeting: 'hello', stored: 'from-the-service' });

    const again = devtool(['pipeline', 'deploy', '--repository', repo, '--name', 'kubectl-app', '--skip-if-exists']);
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stdout, /^Pipeline "kubectl-app" is already deployed in namespace \S+ \(commit [0-9a-f]{12}\): skipped\n$/);

    // Redeployed with the last deploy's parameters, from a folder that is no checkout (Okteto's #3903).
    const reused = devtool(['pipeline', 'deploy', '--name', 'kubectl-app', '--reuse-params', '--wait']);
    assert.equal(reused.code, 0, `${reused.stdout}\n${reused.stderr}`);
    assert.match(reused.stdout, /devtool pipeline: devtool deploy --name kubectl-app --namespace \S+ --file deploy\/preview.yml /);
    assert.match(reused.stdout, /devtool pipeline: with 2 --var value\(s\) from the run's Secret/);
    assert.match(reused.stderr, /✓ pipeline "kubectl-app" deployed/);

    const destroyed = devtool(['pipeline', 'destroy', '--name', 'kubectl-app', '--wait']);
    assert.equal(destroyed.code, 0, destroyed.stderr);
    assert.match(destroyed.stderr, /✓ pipeline "kubectl-app" destroyed/);
    // The destroy command of deploy/preview.yml ran, with the deploy's variables, each value whole.
    assert.match(destroyed.stdout, /devtool pipeline: devtool destroy --name kubectl-app --namespace \S+ .*--file deploy\/preview.yml/);
    assert.match(destroyed.stdout, /devtool pipeline: with 2 variable\(s\) of the deploy from the run's Secret/);
    assert.ok(destroyed.stdout.includes(`delete the configmap of hello [${note}]`), destroyed.stdout);
    assert.match(destroyed.stdout, /deleted for hello/);
    assert.doesNotMatch(destroyed.stdout, /is not set/);
    assert.ok(!destroyed.stdout.includes('GREETING=hello'), destroyed.stdout);
    // The runner's Job, pods and Secrets go with the record once the service has seen the result.
    const deadline = Date.now() + 60_000;
    let left = await objectsLeft();
    while (left.length && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 1000));
      left = await objectsLeft();
    }
    assert.deepEqual(left, []);
  });

  test('a Compose application with a build section: the hosted builder builds it, its endpoint serves the built page, a rerun skips it', async () => {
    // The runner has no Docker daemon: its devtool works on the service context (the run's API
    // token), so the image can only come from the hosted builder.
    const page = `built-${run}`;
    const dir = join(work, 'compose-build');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'Dockerfile'), `FROM localhost:5000/nginx:1\nRUN echo "${page}" > /usr/share/nginx/html/index.html\n`);
    writeFileSync(join(dir, 'compose.yaml'), ['services:', '  web:', '    build: .', '    ports:', '      - "8080:80"', ''].join('\n'));
    const repo = script('scripts/git-server.sh', ['repo', `compose-build-${run}`, dir]);
    const d = devtool(['pipeline', 'deploy', '--repository', repo, '--name', 'compose-build', '--wait', '--timeout', '5m'], 400_000);
    assert.equal(d.code, 0, `${d.stdout}\n${d.stderr}`);
    assert.match(d.stdout, new RegExp(`building image web with the hosted builder of ${URL_.replaceAll('.', '\\.')}`));
    assert.match(d.stderr, /✓ pipeline "compose-build" deployed/);
    const url = `https://web-${NS}.devtool.test`;
    let last: Fetched = {};
    await waitFor(
      `${url} serves the built page`,
      async () => {
        last = await httpsGet(url, readFileSync(CA_FILE, 'utf8'));
        return last.status === 200;
      },
      90_000,
    ).catch(() => assert.fail(`${url}: ${JSON.stringify(last)}`));
    assert.equal(last.body?.trim(), page);
    // The run's API token (one of the user's tokens while the run goes on) was revoked when its end was recorded.
    const tokens = await core.listNamespacedSecret({ namespace: RELEASE, labelSelector: `devtool.dev/kind=token,devtool.dev/user=${user}` });
    const names = tokens.items.map((t) => Buffer.from(t.data?.['name'] ?? '', 'base64').toString('utf8'));
    assert.ok(!names.some((n) => n.startsWith('pipeline compose-build')), `a run token outlived its run: ${names.join(', ')}`);
    // The runner's pod cannot reach the registry on the node's loopback; its hosted builder can, and
    // answers for it: the first run asked it (no "cannot tell"), the second run of the same commit
    // finds the image there and builds nothing.
    assert.doesNotMatch(d.stdout, /cannot tell whether/);
    const again = devtool(['pipeline', 'deploy', '--repository', repo, '--name', 'compose-build', '--wait', '--timeout', '5m'], 400_000);
    assert.equal(again.code, 0, `${again.stdout}\n${again.stderr}`);
    assert.match(
      again.stdout,
      new RegExp(`image web is up to date: \\S+ is in the registry \\(asked through the hosted builder of ${URL_.replaceAll('.', '\\.')}\\), build skipped`),
    );
    assert.doesNotMatch(again.stdout, /building image web|cannot tell whether/);
    const destroyed = devtool(['pipeline', 'destroy', '--name', 'compose-build', '--wait']);
    assert.equal(destroyed.code, 0, destroyed.stderr);
  });

  test('a failing deploy exits non-zero with its last lines; a second run while one runs is refused', () => {
    const repo = repository('failing-app', ['deploy:', '  - echo "preparing"; echo "the database is unreachable" >&2; exit 3', ''].join('\n'));
    const failed = devtool(['pipeline', 'deploy', '--repository', repo, '--name', 'failing-app', '--wait']);
    assert.equal(failed.code, 1, failed.stdout);
    assert.match(failed.stderr, /last lines of the run:\n(.*\n)*.*the database is unreachable/);
    assert.match(failed.stderr, /Error: pipeline "failing-app" failed in namespace \S+: the runner failed: /);

    const slow = repository('slow-app', ['deploy:', '  - sleep 120', ''].join('\n'));
    const first = devtool(['pipeline', 'deploy', '--repository', slow, '--name', 'slow-app']);
    assert.equal(first.code, 0, first.stderr);
    assert.match(
      first.stdout,
      /^Pipeline "slow-app" deploy started in namespace \S+ \(Job (devtool-run-slow-app-\w+)\)\.\nFollow it with: kubectl logs -f job\/\1/,
    );
    const second = devtool(['pipeline', 'deploy', '--repository', slow, '--name', 'slow-app']);
    assert.equal(second.code, 1);
    assert.match(second.stderr, /^Error: pipeline slow-app in namespace \S+ is running \(deploy since [^)]+\): wait until it ends/);
  });

  test('--timeout is enforced by the cluster: the Job is stopped', async () => {
    const repo = repository('endless-app', ['deploy:', '  - echo "going to sleep"; sleep 600', ''].join('\n'));
    const started = Date.now();
    const r = devtool(['pipeline', 'deploy', '--repository', repo, '--name', 'endless-app', '--wait', '--timeout', '25s']);
    assert.equal(r.code, 1, r.stdout);
    assert.match(r.stderr, /Error: pipeline "endless-app" failed in namespace \S+: timed out: the Job was stopped after its --timeout/);
    assert.ok(Date.now() - started < 120_000, 'ended soon after the deadline');
    const pods = (await core.listNamespacedPod({ namespace: NS, labelSelector: 'devtool.dev/pipeline=endless-app' })).items;
    assert.deepEqual(
      pods.filter((p) => p.status?.phase === 'Running' && !p.metadata?.deletionTimestamp).map((p) => p.metadata?.name),
      [],
    );
  });

  test('a private repository: refused without the stored token, deployed with it, the token never shown', async () => {
    const repo = repository('private-app', ['deploy:', '  - echo "cloned a private repository"', ''].join('\n'), GIT_TOKEN);
    const without = devtool(['pipeline', 'deploy', '--repository', repo, '--name', 'private-app', '--wait']);
    assert.equal(without.code, 1, without.stdout);
    assert.match(without.stderr, /could not read Username|Authentication failed|401/);

    assert.equal(await putSecret('GIT_TOKEN_GIT_SERVER_DEVTOOL_TEST', GIT_TOKEN), 204);
    const child = spawnDevtool(['pipeline', 'deploy', '--repository', repo, '--name', 'private-app', '--wait'], { env, cwd: work });
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d;
    });
    child.stderr.on('data', (d: Buffer) => {
      out += d;
    });
    // While it runs, its Job spec holds no token.
    let jobSpecs = '';
    const watch = setInterval(async () => {
      const jobs = await batch.listNamespacedJob({ namespace: NS, labelSelector: 'devtool.dev/pipeline=private-app' }).catch(() => undefined);
      jobSpecs += JSON.stringify(jobs?.items ?? []);
    }, 300);
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    clearInterval(watch);
    assert.equal(code, 0, out);
    assert.match(out, /cloned a private repository/);
    assert.match(jobSpecs, /devtool-run-private-app-/, 'the Job was seen');
    assert.ok(!jobSpecs.includes(GIT_TOKEN), 'no token in the Job spec');
    assert.ok(!out.includes(GIT_TOKEN), 'no token in the output');
    // The record is the service's, in its own namespace (base64 in a Secret: decoded to be searched).
    const record = await core.readNamespacedSecret({ name: `devtool-run.${NS}.private-app`, namespace: RELEASE });
    const text = Object.values(record.data ?? {})
      .map((v) => Buffer.from(v, 'base64').toString('utf8'))
      .join('\n');
    assert.match(text, /"repository":"https:/, 'the record was read');
    assert.ok(!text.includes(GIT_TOKEN), 'no token in the record');
  });

  test('service pods deleted during a run: --wait carries on, shows each line once, and the status is right', async () => {
    const repo = repository('steady-app', ['deploy:', '  - echo "before the restart"; sleep 15; echo "after the restart"', ''].join('\n'));
    const child = spawnDevtool(['pipeline', 'deploy', '--repository', repo, '--name', 'steady-app', '--wait'], { env, cwd: work });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => {
      stdout += d;
    });
    child.stderr.on('data', (d: Buffer) => {
      stderr += d;
    });
    const closed = new Promise<number | null>((resolve) => child.on('close', resolve));
    const deadline = Date.now() + 120_000;
    while (!stdout.includes('before the restart') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
    assert.ok(stdout.includes('before the restart'), `${stdout}\n${stderr}`);
    // Every service pod goes (the Deployment makes new ones): whichever held the stream is among them.
    const pods = (await core.listNamespacedPod({ namespace: RELEASE, labelSelector: 'app.kubernetes.io/component=service' })).items;
    for (const p of pods) await core.deleteNamespacedPod({ name: p.metadata!.name!, namespace: RELEASE });
    const code = await closed;
    assert.equal(code, 0, `${stdout}\n${stderr}`);
    // The command's output lines ("[command] text"), each once: a reopened stream skips what was shown.
    assert.equal(stdout.match(/\] before the restart$/gm)?.length, 1, stdout);
    assert.equal(stdout.match(/\] after the restart$/gm)?.length, 1, stdout);
    assert.equal(stdout.match(/^devtool pipeline: cloning /gm)?.length, 1, stdout);
    assert.match(stderr, /✓ pipeline "steady-app" deployed/);
  });

  test('an SSH remote is refused in one line, before anything runs', () => {
    const r = devtool(['pipeline', 'deploy', '--repository', 'git@github.com:team/app.git']);
    assert.equal(r.code, 2);
    assert.equal(
      r.stderr,
      'Error: invalid value "git@github.com:team/app.git" for flag --repository: pipelines clone over HTTPS only (never SSH); ' +
        'e.g. --repository https://github.com/team/app.git\n',
    );
  });
});
