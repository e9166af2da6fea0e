import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { PreviewDeployBody } from '../../api/routes.ts';
import { ApiError } from '../errors.ts';
import { fakeCluster } from '../pipelines/fake-cluster.ts';
import { KEY_KUBE_TOKEN } from '../pipelines/job.ts';
import type { RunSettings } from '../pipelines/runs.ts';
import { MemoryStore } from '../store/memory.ts';
import { deployPreview, destroyPreview, getPreview, listPreviews, mayRedeployPreview, pipelineNameOf, type PreviewDeps, previewEndpoints } from './previews.ts';
import { sleepPreview, wakePreview } from './sleep.ts';
import { sweepPreviews } from './sweeper.ts';

const alice = { name: 'alice', admin: false };
const bob = { name: 'bob', admin: false };
const root = { name: 'root', admin: true };

/** The service's parts over a memory store and one fake cluster; `clock` moves time. */
function setup() {
  const store = new MemoryStore();
  const fake = fakeCluster();
  const hosts = new Map<string, string[]>();
  /** Replicas of each namespace's workloads, and what sleep kept. */
  const workloads = new Map<string, { replicas: number; kept?: number }[]>();
  const clock = { now: new Date('2026-03-01T00:00:00Z') };
  const actedAs: string[] = [];
  const deps: PreviewDeps = {
    store,
    now: () => clock.now,
    async actAs(user) {
      actedAs.push(user);
      const settings: RunSettings = {
        user,
        runnerImage: 'runner:1',
        clusterCa: 'CA',
        labels: {},
        issueToken: async () => `token-of-${user}`,
        storedSecrets: async () => ({}),
        now: () => clock.now,
      };
      const scaleWorkloads = async (ns: string, action: 'sleep' | 'wake') => {
        let changed = 0;
        for (const w of workloads.get(ns) ?? []) {
          if (action === 'sleep' && w.replicas > 0) [w.kept, w.replicas, changed] = [w.replicas, 0, changed + 1];
          if (action === 'wake' && w.kept !== undefined) [w.replicas, w.kept, changed] = [w.kept, undefined, changed + 1];
        }
        return changed;
      };
      return { cluster: { ...fake.cluster, ingressHosts: async (ns) => hosts.get(ns) ?? [], scaleWorkloads }, settings };
    },
  };
  /** The Job of the preview's current run, and a way to end it. */
  const jobOf = (preview: string) => [...fake.jobs.entries()].find(([, j]) => j.job.metadata?.namespace === preview);
  const end = (preview: string, state: 'succeeded' | 'failed', log = '') => {
    const [, j] = jobOf(preview) ?? assert.fail(`no Job in ${preview}`);
    j.state = state === 'succeeded' ? { state } : { state, reason: 'BackoffLimitExceeded', message: 'failed' };
    j.log = log;
  };
  return { store, fake, hosts, workloads, clock, deps, actedAs, jobOf, end };
}

const request = (over: Partial<PreviewDeployBody> = {}): PreviewDeployBody => ({
  name: 'shop-feature',
  scope: 'personal',
  repository: 'https://git.example.com/acme/Shop.git',
  branch: 'feature',
  sourceUrl: 'https://git.example.com/acme/shop/pulls/7',
  variables: ['A=1'],
  timeoutSeconds: 300,
  ...over,
});

async function refused(p: Promise<unknown>, status: number, message: RegExp): Promise<void> {
  await assert.rejects(p, (err: unknown) => {
    assert.ok(err instanceof ApiError, String(err));
    assert.equal(err.statusCode, status, err.message);
    assert.match(err.message, message);
    return true;
  });
}

test('the pipeline of a preview is named after its repository', () => {
  assert.equal(pipelineNameOf('https://git.example.com/acme/Shop.git'), 'shop');
  assert.equal(pipelineNameOf('https://git.example.com/acme/my_app/'), 'my-app');
  assert.equal(pipelineNameOf('https://git.example.com/'), 'app');
  assert.equal(pipelineNameOf(`https://x.example/${'a'.repeat(60)}`).length, 40);
});

test('a personal preview: its namespace, a run as its creator, reachable by its creator only', async () => {
  const { store, deps, jobOf, end, actedAs } = setup();
  const deployed = await deployPreview(deps, alice, request());
  assert.deepEqual(
    { status: deployed.status, scope: deployed.scope, owner: deployed.owner, pipeline: deployed.pipeline, branch: deployed.branch },
    { status: 'progressing', scope: 'personal', owner: 'alice', pipeline: 'shop', branch: 'feature' },
  );
  const ns = await store.getNamespace('shop-feature');
  assert.equal(ns?.preview?.scope, 'personal');
  assert.equal(ns?.preview?.sourceUrl, 'https://git.example.com/acme/shop/pulls/7');
  assert.equal(ns?.owner, 'alice');
  assert.deepEqual(actedAs, ['alice']);
  const [, job] = jobOf('shop-feature')!;
  assert.equal(job.secrets[0]!.stringData![KEY_KUBE_TOKEN], 'token-of-alice');

  end('shop-feature', 'succeeded', 'devtool pipeline: commit 0123456789abcdef (branch feature)\n');
  assert.equal((await getPreview(deps, alice, 'shop-feature')).status, 'deployed');
  assert.equal((await getPreview(deps, alice, 'shop-feature')).commit, '0123456789abcdef');
  // Bob neither sees it nor can take its name.
  assert.deepEqual(await listPreviews(deps, bob), []);
  await refused(getPreview(deps, bob, 'shop-feature'), 404, /no preview environment shop-feature/);
  await refused(destroyPreview(deps, bob, 'shop-feature', 60), 404, /no preview environment/);
  await refused(previewEndpoints(deps, bob, 'shop-feature'), 404, /no preview environment/);
  await refused(deployPreview(deps, bob, request()), 409, /taken by another user's personal preview/);
  assert.deepEqual(
    (await listPreviews(deps, alice)).map((p) => [p.name, p.status]),
    [['shop-feature', 'deployed']],
  );
});

test('global previews: only admins deploy or destroy them, every user reaches them', async () => {
  const { store, deps, end, hosts } = setup();
  await refused(deployPreview(deps, alice, request({ scope: 'global', name: 'demo' })), 403, /only admins can deploy a global preview/);
  assert.equal(await store.getNamespace('demo'), undefined, 'nothing created');

  // Deployed without a branch: once the run has ended, the list names the default branch it cloned.
  await deployPreview(deps, root, request({ scope: 'global', name: 'demo', branch: undefined }));
  assert.equal((await getPreview(deps, bob, 'demo')).branch, undefined);
  end('demo', 'succeeded', 'devtool pipeline: commit 0123456789abcdef (branch trunk)\n');
  hosts.set('demo', ['shop-demo.devtool.test', 'api-demo.devtool.test']);
  assert.deepEqual(
    (await listPreviews(deps, bob)).map((p) => [p.name, p.scope, p.status, p.branch]),
    [['demo', 'global', 'deployed', 'trunk']],
  );
  assert.deepEqual(await previewEndpoints(deps, bob, 'demo'), ['https://api-demo.devtool.test', 'https://shop-demo.devtool.test']);
  await refused(destroyPreview(deps, bob, 'demo', 60), 403, /only admins can destroy the global preview environment demo/);
  // The name is taken in the other scope: said plainly, for admins too.
  await refused(deployPreview(deps, bob, request({ name: 'demo' })), 409, /exists as a global preview: destroy it first, or deploy it with --scope global/);
  await refused(deployPreview(deps, root, request({ name: 'demo' })), 409, /exists as a global preview/);
});

test('names: taken by a namespace, reserved, or a personal preview in the other scope', async () => {
  const { store, deps } = setup();
  await store.createNamespace({ name: 'team', owner: 'alice', personal: false });
  await refused(deployPreview(deps, alice, request({ name: 'team' })), 409, /the name is taken by a namespace/);
  await refused(deployPreview(deps, alice, request({ name: 'kube-system' })), 409, /the name is taken by a namespace/);
  await refused(deployPreview(deps, alice, request({ name: 'alice-devtool' })), 400, /reserved for personal namespaces/);
  await deployPreview(deps, alice, request({ name: 'mine' }));
  await refused(deployPreview(deps, root, request({ name: 'mine', scope: 'global' })), 409, /exists as a personal preview.*--scope personal/);
});

test('a redeploy waits for the run going on, then starts anew and counts its age from then', async () => {
  const { store, deps, clock, end } = setup();
  await deployPreview(deps, alice, request());
  await refused(deployPreview(deps, alice, request()), 409, /is being deployed: wait until its run ends/);
  end('shop-feature', 'failed', 'boom\n');
  const failed = await getPreview(deps, alice, 'shop-feature');
  assert.equal(failed.status, 'error');
  assert.match(failed.message ?? '', /boom/);
  clock.now = new Date('2026-03-02T00:00:00Z');
  const again = await deployPreview(deps, alice, request({ branch: 'feature-2', sourceUrl: 'https://git.example.com/acme/shop/pulls/8' }));
  assert.equal(again.status, 'progressing');
  assert.equal(again.branch, 'feature-2');
  const ns = await store.getNamespace('shop-feature');
  assert.equal(ns?.preview?.deployedAt, '2026-03-02T00:00:00.000Z');
  assert.equal(ns?.preview?.sourceUrl, 'https://git.example.com/acme/shop/pulls/8');
});

test('a first deploy that cannot start leaves nothing', async () => {
  const { store, deps } = setup();
  const failing: PreviewDeps = {
    ...deps,
    actAs: async () => {
      throw new ApiError(503, 'this devtool service runs no pipelines');
    },
  };
  await refused(deployPreview(failing, alice, request()), 503, /runs no pipelines/);
  assert.equal((await store.getNamespace('shop-feature'))?.status ?? 'gone', 'Terminating');
  store.finishDeletes();
  assert.equal(await store.getNamespace('shop-feature'), undefined);
});

test('destroy runs as the owner, then deletes the namespace; a failed destroy says so and can be tried again', async () => {
  const { store, deps, end, jobOf, actedAs } = setup();
  await deployPreview(deps, alice, request());
  end('shop-feature', 'succeeded');
  actedAs.length = 0;

  // An admin destroys Alice's preview: the run acts as Alice, who deployed it.
  const destroying = await destroyPreview(deps, root, 'shop-feature', 120);
  assert.equal(destroying.status, 'destroying');
  assert.deepEqual(actedAs, ['alice']);
  const [, job] = jobOf('shop-feature')!;
  assert.equal(job.secrets[0]!.stringData![KEY_KUBE_TOKEN], 'token-of-alice');
  assert.ok(job.job.spec?.template.spec?.containers[0]?.args?.includes('--volumes'), 'everything goes: volumes too');
  assert.equal(job.job.spec?.activeDeadlineSeconds, 120);
  await refused(deployPreview(deps, alice, request()), 409, /is being destroyed/);

  end('shop-feature', 'failed', 'destroy command failed\n');
  const failed = await getPreview(deps, alice, 'shop-feature');
  assert.equal(failed.status, 'error');
  assert.match(failed.message ?? '', /^destroy failed: .*devtool preview destroy shop-feature tries again/);
  // The sweeper leaves a failed destroy for its owner to see; a user asking again starts it anew.
  await sweepPreviews(deps, { timeoutSeconds: 60 });
  assert.equal((await getPreview(deps, alice, 'shop-feature')).status, 'error');
  assert.equal((await destroyPreview(deps, alice, 'shop-feature', 60)).status, 'destroying');

  end('shop-feature', 'succeeded');
  assert.equal((await getPreview(deps, alice, 'shop-feature')).status, 'destroying');
  assert.equal((await store.getNamespace('shop-feature'))?.status, 'Terminating', 'the namespace is deleted once the run has ended');
  store.finishDeletes();
  await refused(getPreview(deps, alice, 'shop-feature'), 404, /no preview environment/);
});

test('destroying stops a deploy still running; a preview with no run goes at once', async () => {
  const { store, deps, fake, jobOf } = setup();
  await deployPreview(deps, alice, request());
  const [deployJob] = jobOf('shop-feature')!;
  await destroyPreview(deps, alice, 'shop-feature', 60);
  assert.equal(fake.jobs.has(deployJob), false, 'the deploy Job is deleted');
  const [destroyJob, j] = jobOf('shop-feature')!;
  assert.notEqual(destroyJob, deployJob);
  assert.equal(j.job.spec?.template.spec?.containers[0]?.args?.[0], 'destroy');

  await store.createNamespace({
    name: 'empty',
    owner: 'alice',
    personal: false,
    preview: { scope: 'personal', pipeline: 'shop', deployedAt: '2026-03-01T00:00:00.000Z' },
  });
  assert.equal((await destroyPreview(deps, alice, 'empty', 60)).status, 'destroying');
  assert.equal((await store.getNamespace('empty'))?.status, 'Terminating');
});

test('the sweeper finishes destroys nobody waits for, and destroys stale previews when told to', async () => {
  const { store, deps, clock, end } = setup();
  await deployPreview(deps, alice, request({ name: 'old' }));
  end('old', 'succeeded');
  await deployPreview(deps, alice, request({ name: 'busy' }));
  clock.now = new Date('2026-03-10T00:00:00Z');
  // Off by default: nothing is stale.
  assert.deepEqual(await sweepPreviews(deps, { timeoutSeconds: 60 }), { advanced: [], stale: [], failed: [] });

  const week = 7 * 86_400_000;
  const report = await sweepPreviews(deps, { timeoutSeconds: 60, staleAfterMs: week });
  assert.deepEqual(report, { advanced: [], stale: ['old'], failed: [] }, 'a preview being deployed is not stale');
  const old = await getPreview(deps, alice, 'old');
  assert.equal(old.status, 'destroying');
  assert.equal(old.message, 'destroyed: not redeployed for 9d (the service destroys previews after 7d)');

  end('old', 'succeeded');
  assert.deepEqual(await sweepPreviews(deps, { timeoutSeconds: 60, staleAfterMs: week }), { advanced: ['old'], stale: [], failed: [] });
  assert.equal((await store.getNamespace('old'))?.status, 'Terminating');
});

test('sleep scales the workloads to zero and wake gives them back; a redeploy wakes it; global ones sleep by admins only', async () => {
  const { store, deps, end, workloads } = setup();
  await deployPreview(deps, alice, request());
  await refused(sleepPreview(deps, alice, 'shop-feature'), 409, /is progressing: only a deployed preview can sleep \(wait until its run ends\)/);
  end('shop-feature', 'succeeded');
  workloads.set('shop-feature', [{ replicas: 2 }, { replicas: 0 }]);
  const asleep = await sleepPreview(deps, alice, 'shop-feature');
  assert.equal(asleep.status, 'sleeping');
  assert.match(asleep.message ?? '', /devtool preview wake shop-feature/);
  assert.deepEqual(workloads.get('shop-feature'), [{ replicas: 0, kept: 2 }, { replicas: 0 }]);
  assert.equal((await listPreviews(deps, alice))[0]?.status, 'sleeping');
  await refused(sleepPreview(deps, bob, 'shop-feature'), 404, /no preview environment/);

  const awake = await wakePreview(deps, alice, 'shop-feature');
  assert.equal(awake.status, 'deployed');
  assert.deepEqual(workloads.get('shop-feature'), [{ replicas: 2, kept: undefined }, { replicas: 0 }]);

  await sleepPreview(deps, alice, 'shop-feature');
  await deployPreview(deps, alice, request());
  assert.equal((await store.getNamespace('shop-feature'))?.preview?.sleepingSince, undefined, 'a redeploy wakes it');

  await deployPreview(deps, root, request({ name: 'demo', scope: 'global' }));
  end('demo', 'succeeded');
  await refused(sleepPreview(deps, bob, 'demo'), 403, /only admins can put the global preview environment demo to sleep/);
  assert.equal((await sleepPreview(deps, root, 'demo')).status, 'sleeping');
  assert.equal((await wakePreview(deps, bob, 'demo')).status, 'deployed', 'every user may wake a global preview');
});

test("a global preview: another admin cannot redeploy it with the owner's credentials; wake and sleep act as its owner", async () => {
  const { deps, end, actedAs, workloads } = setup();
  const other = { name: 'ops', admin: true };
  await deployPreview(deps, root, request({ scope: 'global', name: 'demo' }));
  end('demo', 'succeeded');
  await refused(
    deployPreview(deps, other, request({ scope: 'global', name: 'demo', repository: 'https://git.example.com/ops/evil.git' })),
    403,
    /belongs to root: only root redeploys it/,
  );
  workloads.set('demo', [{ replicas: 2 }]);
  actedAs.length = 0;
  await sleepPreview(deps, other, 'demo');
  await wakePreview(deps, bob, 'demo');
  assert.deepEqual([...new Set(actedAs)], ['root'], 'the scaling acts as the owner: other users only read a global preview');
  assert.equal(workloads.get('demo')![0]!.replicas, 2);
});

test('a destroy record the service did not ask for deletes nothing: the namespace goes only after a destroy was asked for', async () => {
  const { store, fake, deps, end } = setup();
  await deployPreview(deps, root, request({ scope: 'global', name: 'demo' }));
  end('demo', 'succeeded');
  // What a forged record would say: a destroy that has ended.
  const found = await fake.cluster.getRecord('demo', 'shop');
  await fake.cluster.putRecord({ ...found!.record, action: 'destroy', status: 'destroyed' }, found!.version, {});
  const seen = await getPreview(deps, bob, 'demo');
  assert.equal(seen.status, 'destroying');
  assert.ok(await store.getNamespace('demo'), 'the namespace is still there');
  assert.equal((await store.getNamespace('demo'))!.status, 'Active');
});

test('who may redeploy: its owner, a global one only while an admin', async () => {
  const { store, deps } = setup();
  await deployPreview(deps, alice, request());
  await deployPreview(deps, root, request({ scope: 'global', name: 'demo' }));
  const mine = (await store.getNamespace('shop-feature'))!;
  const global = (await store.getNamespace('demo'))!;
  assert.equal(mayRedeployPreview(alice, mine), true);
  assert.equal(mayRedeployPreview(root, mine), false, "an admin does not redeploy another user's preview");
  assert.equal(mayRedeployPreview(root, global), true);
  assert.equal(mayRedeployPreview({ name: 'ops', admin: true }, global), false);
  assert.equal(mayRedeployPreview({ name: 'root', admin: false }, global), false, 'no longer an admin');
});
