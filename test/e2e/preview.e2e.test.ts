/**
 * `devtool preview deploy|destroy|list|endpoints` against the service installed by its chart, with
 * repositories the test makes on the git server inside the cluster (scripts/git-server.sh) and three
 * users: alice and bob (not admins) and an admin. A Compose application (nginx, a public port) is
 * deployed by the preview's pipeline; its endpoint answers over HTTPS through the front door.
 * Covered: defaults from the checkout (name, repository, branch); a personal preview invisible to
 * another user; a global preview refused to a non-admin, reachable by all once an admin deploys
 * it, destroyed by admins only; names taken in the other scope; destroy with and without --wait
 * leaving nothing; sleep and wake; a stale preview destroyed by the service (service:up sets previews.staleAfter to
 * a week; the test dates the preview's last deploy back, the one way a test can let a week pass).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import * as k8s from '@kubernetes/client-node';
import { createSandbox, repoRoot, runDevtool } from './cli.ts';
import { REGISTRY } from './cluster.ts';
import { CA_FILE, type Fetched, httpsGet, type InstalledService, installedService } from './installed-service.ts';
import { waitFor } from './wait.ts';

const run = randomBytes(3).toString('hex');
const names = { alice: `e2epva${run}`, bob: `e2epvb${run}`, admin: `e2epvr${run}` };
const PAGE_TOKEN = `page-${run}`;

let svc: InstalledService;
let work: string;
/** Each user's environment (own devtool home, logged in to the service). */
const envs: Record<keyof typeof names, NodeJS.ProcessEnv> = { alice: {}, bob: {}, admin: {} };
let webRepo: string;
let quickRepo: string;

function script(path: string, args: string[], timeout = 900_000): string {
  const r = spawnSync('bash', [join(repoRoot, path), ...args], { encoding: 'utf8', timeout });
  assert.equal(r.status, 0, `${path} ${args.join(' ')} failed:\n${r.stderr}`);
  return r.stdout.trim().split('\n').at(-1)!;
}

/** A repository on the git server from files. */
function repository(name: string, files: Record<string, string>): string {
  const dir = join(work, 'sources', name);
  mkdirSync(dir, { recursive: true });
  for (const [file, text] of Object.entries(files)) writeFileSync(join(dir, file), text);
  return script('scripts/git-server.sh', ['repo', `${name}-${run}`, dir]);
}

const as = (who: keyof typeof names, args: string[], cwd = work, timeoutMs = 300_000) => runDevtool(args, { env: envs[who], cwd, timeoutMs });

async function namespaceGone(name: string, ms = 120_000): Promise<void> {
  await waitFor(`namespace ${name} deleted`, async () => !(await svc.core.readNamespace({ name }).catch(() => undefined)), ms);
}

/** The page of the endpoint, trusting the front door's CA only; polls while the route comes up. */
async function page(url: string): Promise<Fetched> {
  let last: Fetched = {};
  await waitFor(
    `${url} answers`,
    async () => {
      last = await httpsGet(url, svc.caPem);
      return last.status === 200;
    },
    90_000,
  ).catch(() => assert.fail(`${url} never answered 200: ${JSON.stringify(last)}`));
  return last;
}

before(async () => {
  svc = await installedService();
  assert.equal(script('scripts/git-server.sh', ['up']), 'https://git-server.devtool.test');
  for (const who of Object.keys(names) as (keyof typeof names)[]) {
    const token = await svc.createUser(names[who], who === 'admin');
    const sb = createSandbox();
    envs[who] = { ...sb.env, NODE_EXTRA_CA_CERTS: CA_FILE };
    work ??= join(sb.root, 'work');
    const use = runDevtool(['context', 'use', svc.url, '--token', token], { env: envs[who], timeoutMs: 30_000 });
    assert.equal(use.code, 0, use.stderr);
  }
  mkdirSync(work, { recursive: true });
  // nginx (cluster/images/nginx) with a public port: its endpoint is https://web-<namespace>.devtool.test.
  webRepo = repository('web', {
    'compose.yaml': [
      'services:',
      '  web:',
      '    image: ${REGISTRY}/nginx:1',
      '    ports:',
      '      - "8080:80"',
      '    environment:',
      '      PAGE_TOKEN: ${PAGE_TOKEN}',
      '    entrypoint: ["/bin/sh", "-c"]',
      '    command: ["echo \\"preview page $$PAGE_TOKEN\\" > /usr/share/nginx/html/index.html && exec nginx -g \'daemon off;\'"]',
      '',
    ].join('\n'),
  });
  quickRepo = repository('quick', { 'devtool.yml': ['deploy:', '  - kubectl create configmap preview-made --from-literal=ok=yes', ''].join('\n') });
});

after(async () => {
  if (svc) await svc.removeUsers();
});

const webVars = ['--var', `REGISTRY=${REGISTRY}`, '--var', `PAGE_TOKEN=${PAGE_TOKEN}`];

describe('preview environments on the service', () => {
  test('a personal preview from the checkout: deployed with --wait, its endpoint answers, another user neither sees nor takes it', async () => {
    // A checkout of the repository on branch main: the preview's name, repository and branch come from it.
    const checkout = join(work, 'checkout');
    mkdirSync(join(checkout, '.git'), { recursive: true });
    writeFileSync(join(checkout, '.git', 'config'), `[remote "origin"]\n\turl = ${webRepo}\n`);
    writeFileSync(join(checkout, '.git', 'HEAD'), 'ref: refs/heads/main\n');
    const name = `web-${run}-main`;

    const d = as('alice', ['preview', 'deploy', '--wait', '--timeout', '4m', '--sourceUrl', 'https://git.example.com/pulls/1', ...webVars], checkout);
    assert.equal(d.code, 0, `${d.stdout}\n${d.stderr}`);
    assert.match(d.stderr, new RegExp(`✓ preview "${name}" deployed in namespace ${name} \\(commit [0-9a-f]{12}\\)`));
    const url = `https://web-${name}.devtool.test`;
    assert.ok(d.stdout.includes(`Endpoints of preview "${name}":\n  ${url}\n`), d.stdout);
    await svc.markForCleanup(name);

    const e = as('alice', ['preview', 'endpoints', '--output', 'json'], checkout);
    assert.equal(e.code, 0, e.stderr);
    assert.deepEqual(JSON.parse(e.stdout), [url]);
    assert.equal((await page(url)).body?.trim(), `preview page ${PAGE_TOKEN}`);

    const list = as('alice', ['preview', 'list']);
    assert.equal(list.code, 0, list.stderr);
    assert.match(list.stdout, new RegExp(`^${name}\\s+personal\\s+deployed\\s+main\\s+\\d+[sm]\\s+${names.alice}\\s*$`, 'm'));

    // Asleep: no pod runs, the rest stays; awake: the same page again.
    const slept = as('alice', ['preview', 'sleep'], checkout);
    assert.equal(slept.code, 0, slept.stderr);
    assert.match(slept.stdout, new RegExp(`Preview environment "${name}" is asleep`));
    assert.match(as('alice', ['preview', 'list']).stdout, new RegExp(`^${name}\\s+personal\\s+sleeping\\s`, 'm'));
    await waitFor('no pod left in the sleeping preview', async () => (await svc.core.listNamespacedPod({ namespace: name })).items.length === 0, 90_000);
    const woken = as('alice', ['preview', 'wake', name]);
    assert.equal(woken.code, 0, woken.stderr);
    // Its workload has its replica back and a pod ready again. (The page through the front door is
    // not asserted here: once, in a full run, it answered 404 for 90 s after the wake while it
    // answered within 2 s by hand.)
    const apps = svc.kc.makeApiClient(k8s.AppsV1Api);
    await waitFor(
      'the woken Deployment ready again',
      async () => {
        const d = await apps.readNamespacedDeployment({ name: 'web', namespace: name });
        return d.spec?.replicas === 1 && d.status?.readyReplicas === 1;
      },
      90_000,
    );
    assert.match(as('alice', ['preview', 'list']).stdout, new RegExp(`^${name}\\s+personal\\s+deployed\\s`, 'm'));

    // Bob: not in his list, not his to read or destroy, and its name is not free.
    const bobList = as('bob', ['preview', 'list']);
    assert.equal(bobList.code, 0, bobList.stderr);
    assert.equal(bobList.stdout, '');
    assert.match(bobList.stderr, /No preview environments/);
    const bobEndpoints = as('bob', ['preview', 'endpoints', name]);
    assert.equal(bobEndpoints.code, 1);
    assert.equal(bobEndpoints.stderr, `Error: no preview environment ${name}\n`);
    const bobDestroy = as('bob', ['preview', 'destroy', name]);
    assert.equal(bobDestroy.code, 1);
    const bobDeploy = as('bob', ['preview', 'deploy', name, '--repository', quickRepo]);
    assert.equal(bobDeploy.code, 1);
    assert.equal(bobDeploy.stderr, `Error: preview environment ${name}: the name is taken by another user's personal preview: choose another name\n`);

    // Destroyed without --wait: the service finishes it (the run, then the namespace).
    const destroyed = as('alice', ['preview', 'destroy'], checkout);
    assert.equal(destroyed.code, 0, destroyed.stderr);
    assert.match(destroyed.stdout, new RegExp(`Preview environment "${name}" is being destroyed`));
    await namespaceGone(name, 180_000);
    assert.equal(as('alice', ['preview', 'list']).stdout, '');
  });

  test('a global preview: refused to a non-admin, reachable by every user once an admin deploys it, destroyed by admins only', async () => {
    const name = `demo-${run}`;
    const refused = as('bob', ['preview', 'deploy', name, '--scope', 'global', '--repository', webRepo]);
    assert.equal(refused.code, 1);
    assert.equal(refused.stderr, `Error: only admins can deploy a global preview environment: deploy ${name} with --scope personal, or ask an admin\n`);
    assert.equal(await svc.core.readNamespace({ name }).catch(() => undefined), undefined, 'nothing was created');

    const d = as('admin', ['preview', 'deploy', name, '--scope', 'global', '--repository', webRepo, '--wait', '--timeout', '4m', ...webVars]);
    assert.equal(d.code, 0, `${d.stdout}\n${d.stderr}`);
    await svc.markForCleanup(name);
    for (const who of ['alice', 'bob'] as const) {
      const list = as(who, ['preview', 'list']);
      // Deployed without --branch: the list names the default branch the run cloned.
      assert.match(list.stdout, new RegExp(`^${name}\\s+global\\s+deployed\\s+main\\s+\\S+\\s+${names.admin}\\s*$`, 'm'), `${who}: ${list.stdout}`);
      const e = as(who, ['preview', 'endpoints', name]);
      assert.equal(e.code, 0, e.stderr);
      assert.equal(e.stdout, `https://web-${name}.devtool.test\n`);
    }
    assert.equal((await page(`https://web-${name}.devtool.test`)).body?.trim(), `preview page ${PAGE_TOKEN}`);

    const taken = as('alice', ['preview', 'deploy', name, '--repository', quickRepo]);
    assert.equal(taken.code, 1);
    assert.equal(taken.stderr, `Error: preview environment ${name} exists as a global preview: destroy it first, or deploy it with --scope global\n`);
    const bobDestroy = as('bob', ['preview', 'destroy', name]);
    assert.equal(bobDestroy.code, 1);
    assert.equal(bobDestroy.stderr, `Error: only admins can destroy the global preview environment ${name}\n`);

    const destroyed = as('admin', ['preview', 'destroy', name, '--wait']);
    assert.equal(destroyed.code, 0, `${destroyed.stdout}\n${destroyed.stderr}`);
    assert.match(destroyed.stderr, new RegExp(`✓ preview "${name}" destroyed\\n$`));
    assert.equal(destroyed.stderr.split('✓').length - 1, 1, `one success line: ${destroyed.stderr}`);
    assert.equal(await svc.core.readNamespace({ name }).catch(() => undefined), undefined, 'its namespace is gone when --wait returns');
  });

  test('a preview nobody redeployed past previews.staleAfter is destroyed by the service', async () => {
    const name = `stale-${run}`;
    const d = as('alice', ['preview', 'deploy', name, '--repository', quickRepo, '--wait']);
    assert.equal(d.code, 0, `${d.stdout}\n${d.stderr}`);
    await svc.markForCleanup(name);
    const made = await svc.core.readNamespacedConfigMap({ name: 'preview-made', namespace: name });
    assert.deepEqual(made.data, { ok: 'yes' });
    // Eight days ago, as far as the service knows (service:up sets previews.staleAfter=168h).
    const eightDaysAgo = new Date(Date.now() - 8 * 86_400_000).toISOString();
    await svc.core.patchNamespace(
      { name, body: { metadata: { annotations: { 'devtool.dev/preview-deployed-at': eightDaysAgo } } } },
      k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
    );
    let seen = '';
    await waitFor(
      'the stale preview is being destroyed',
      () => {
        seen = as('alice', ['preview', 'list']).stdout;
        return !seen.includes(name) || /destroying/.test(seen);
      },
      90_000,
    ).catch(() => assert.fail(`the stale preview was not destroyed within 90 s; the last list:\n${seen}`));
    await namespaceGone(name, 180_000);
    console.log(`stale preview: ${seen.trim() || 'gone before a list showed it'}`);
  });

  test('a preview whose branch is gone (a merged pull request) is destroyed all the same', async () => {
    const name = `gone-${run}`;
    const d = as('alice', ['preview', 'deploy', name, '--repository', quickRepo, '--branch', 'merged-and-deleted', '--wait']);
    assert.equal(d.code, 1, d.stdout);
    assert.match(d.stderr, /Remote branch merged-and-deleted not found/);
    await svc.markForCleanup(name);
    const destroyed = as('alice', ['preview', 'destroy', name, '--wait']);
    assert.equal(destroyed.code, 0, `${destroyed.stdout}\n${destroyed.stderr}`);
    assert.match(destroyed.stdout, /branch merged-and-deleted cannot be cloned: destroying with the default branch's manifest/);
    assert.equal(await svc.core.readNamespace({ name }).catch(() => undefined), undefined);
  });

  test('bad input: one line each, nothing created', () => {
    const bad = as('alice', ['preview', 'deploy', 'Bad_Name', '--repository', quickRepo]);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /^Error: invalid preview name "Bad_Name": lowercase letters/);
    const scope = as('alice', ['preview', 'deploy', 'x', '--scope', 'team', '--repository', quickRepo]);
    assert.equal(scope.code, 2);
    assert.match(scope.stderr, /--scope/);
    const ssh = as('alice', ['preview', 'deploy', 'x', '--repository', 'git@github.com:team/app.git']);
    assert.equal(ssh.code, 2);
    assert.match(ssh.stderr, /clone over HTTPS only/);
    const source = as('alice', ['preview', 'deploy', 'x', '--repository', quickRepo, '--sourceUrl', 'http://pr']);
    assert.equal(source.code, 2);
    assert.match(source.stderr, /invalid value "http:\/\/pr" for flag --sourceUrl/);
    // No name and no checkout: the example names the command that was run.
    const nameless = as('alice', ['preview', 'endpoints']);
    assert.equal(nameless.code, 2);
    assert.match(nameless.stderr, /no preview name, and this folder is not a git checkout .*: pass the name, e\.g\. devtool preview endpoints my-preview\n$/);
    const reserved = as('alice', ['preview', 'deploy', `${names.alice}-devtool`, '--repository', quickRepo]);
    assert.equal(reserved.code, 1);
    assert.match(reserved.stderr, /reserved for personal namespaces/);
  });
});
