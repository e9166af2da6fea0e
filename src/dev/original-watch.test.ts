/**
 * The original-deployment watcher against an in-memory Deployment API: what it writes when the
 * original is redeployed, changed, restored by `down`, deleted and recreated, and how its watch
 * loop recovers when the watch or the API server goes away.
 */
import { afterEach, test } from 'node:test';
import assert from 'node:assert/strict';
import type { V1Deployment, V1Status } from '@kubernetes/client-node';
import type { DeploymentObject } from '../kube/objects.ts';
import type { DevObjects } from './mirror.ts';
import { FOLDER_ANNOTATION, ORIGINAL_ANNOTATION, REPLICAS_ANNOTATION, SPEC_HASH_ANNOTATION } from './names.ts';
import { OriginalWatch, type DeploymentWatchApi } from './original-watch.ts';
import type { OriginalKind } from './statefulset.ts';

const FOLDER = 'f0ld3r';
const MIRROR = 'web-dev';

type Watcher = { name: string; event(type: string, object: V1Deployment | V1Status): void; done(err: unknown): void; open: boolean };

/** Deployments of one namespace, in memory: resourceVersions, 404s and 409s as the API server gives them. */
class FakeDeployments implements DeploymentWatchApi {
  readonly objects = new Map<string, V1Deployment>();
  readonly watchers: Watcher[] = [];
  readonly calls: string[] = [];
  /** What the originals are (the watcher names them so; the fake stores them alike). */
  kind: OriginalKind = 'Deployment';
  /** The next lists that fail (the API server away). */
  failLists = 0;
  /** The next merge patches that get a 409 (someone wrote in between). */
  conflicts = 0;
  private rv = 100;

  put(d: V1Deployment, type = 'MODIFIED'): void {
    const stored = structuredClone({ ...d, metadata: { ...d.metadata, resourceVersion: String(++this.rv) } });
    this.objects.set(stored.metadata!.name!, stored);
    this.emit(type, stored);
  }

  remove(name: string): void {
    const d = this.objects.get(name)!;
    this.objects.delete(name);
    this.emit('DELETED', d);
  }

  /** Ends the open watches as the server would: a Status event (410 Gone), or a dropped connection. */
  endWatches(how: { gone: true } | { err: Error }): void {
    for (const w of this.openWatches()) {
      if ('gone' in how) w.event('ERROR', { code: 410, message: 'too old resource version' });
      else w.done(how.err);
    }
  }

  openWatches(): Watcher[] {
    return this.watchers.filter((w) => w.open);
  }

  async list(name: string): Promise<{ items: V1Deployment[]; resourceVersion?: string }> {
    this.calls.push(`list ${name}`);
    if (this.failLists > 0) {
      this.failLists--;
      throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:6443'), { code: 'ECONNREFUSED' });
    }
    const d = this.objects.get(name);
    return { items: d ? [structuredClone(d)] : [], resourceVersion: String(this.rv) };
  }

  async watch(name: string, query: { resourceVersion?: string }, event: Watcher['event'], done: Watcher['done']): Promise<{ abort(): void }> {
    this.calls.push(`watch ${name} from ${query.resourceVersion}`);
    const w: Watcher = { name, event, done, open: true };
    this.watchers.push(w);
    return { abort: () => (w.open = false) };
  }

  /** The mirror lives in the same map: the fake's originals are Deployments too. */
  readMirror(name: string): Promise<V1Deployment> {
    return this.read(name);
  }

  async read(name: string): Promise<V1Deployment> {
    this.calls.push(`read ${name}`);
    const d = this.objects.get(name);
    if (!d) throw Object.assign(new Error('not found'), { code: 404 });
    return structuredClone(d);
  }

  async mergePatch(
    name: string,
    body: { metadata?: { resourceVersion?: string; annotations?: Record<string, string> }; spec?: { replicas?: number } },
  ): Promise<unknown> {
    this.calls.push(`patch ${name}`);
    const d = this.objects.get(name);
    if (!d) throw Object.assign(new Error('not found'), { code: 404 });
    if (this.conflicts > 0 || (body.metadata?.resourceVersion && body.metadata.resourceVersion !== d.metadata!.resourceVersion)) {
      if (this.conflicts > 0) this.conflicts--;
      throw Object.assign(new Error('conflict'), { code: 409 });
    }
    this.put({
      ...d,
      metadata: { ...d.metadata, annotations: { ...d.metadata!.annotations, ...body.metadata?.annotations } },
      spec: { ...d.spec!, ...body.spec },
    });
    return undefined;
  }

  async replace(name: string, body: V1Deployment): Promise<unknown> {
    this.calls.push(`replace ${name}`);
    const d = this.objects.get(name);
    if (!d) throw Object.assign(new Error('not found'), { code: 404 });
    if (body.metadata?.resourceVersion !== d.metadata!.resourceVersion) throw Object.assign(new Error('conflict'), { code: 409 });
    this.put(body);
    return undefined;
  }

  private emit(type: string, d: V1Deployment): void {
    for (const w of this.openWatches()) if (w.name === d.metadata!.name) w.event(type, structuredClone(d));
  }
}

function original(o: { image?: string; replicas?: number; uid?: string; ours?: boolean; recordedReplicas?: number } = {}): V1Deployment {
  const annotations: Record<string, string> = o.ours === false ? {} : { [FOLDER_ANNOTATION]: FOLDER, [REPLICAS_ANNOTATION]: String(o.recordedReplicas ?? 1) };
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web', uid: o.uid ?? 'uid-1', annotations },
    spec: {
      replicas: o.replicas ?? 0,
      selector: { matchLabels: { app: 'web' } },
      template: { spec: { containers: [{ name: 'web', image: o.image ?? 'web:1' }] } },
    },
  };
}

/** The mirror `up`'s inputs make for an original: its spec hash follows the original's image. */
function mirrorFor(d: V1Deployment): DeploymentObject {
  const image = d.spec!.template.spec!.containers[0]!.image!;
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: {
      name: MIRROR,
      labels: { dev: 'yes' },
      annotations: { [FOLDER_ANNOTATION]: FOLDER, [ORIGINAL_ANNOTATION]: 'web', [SPEC_HASH_ANNOTATION]: `hash-${image}` },
    },
    spec: { replicas: 1, selector: { matchLabels: { app: 'web-dev' } }, template: { spec: { containers: [{ name: 'dev', image }] } } },
  };
}

const watches: OriginalWatch[] = [];
afterEach(() => {
  for (const w of watches.splice(0)) w.stop();
});

function start(api: FakeDeployments): { notices: string[] } {
  const notices: string[] = [];
  const objects = { deployment: mirrorFor(api.objects.get('web') ?? original()) } as DevObjects;
  watches.push(
    new OriginalWatch({
      deployments: api,
      folder: FOLDER,
      origin: 'host:/src/web',
      objects,
      rebuild: (d) => ({ ...objects, deployment: mirrorFor(d) }),
      notice: (m) => notices.push(m),
      log: { debug: () => undefined },
      backoffMs: { min: 5, max: 40 },
    }),
  );
  return { notices };
}

/** A cluster where `up` has activated the dev container: the original at zero, the mirror running. */
function activated(): FakeDeployments {
  const api = new FakeDeployments();
  api.put(original(), 'ADDED');
  api.put(mirrorFor(original()), 'ADDED');
  return api;
}

async function eventually(what: string, check: () => boolean, ms = 3000): Promise<void> {
  const until = Date.now() + ms;
  while (!check()) {
    if (Date.now() > until) assert.fail(`not within ${ms} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

const replicasOf = (api: FakeDeployments, name: string) => api.objects.get(name)?.spec?.replicas;

test('a redeployed original is scaled back to zero, its new replicas recorded for down; the mirror is left as it is', async () => {
  const api = activated();
  const { notices } = start(api);
  await eventually('the watch is open', () => api.openWatches().length === 1);
  api.put(original({ replicas: 2 }));
  await eventually('the original is back at 0', () => replicasOf(api, 'web') === 0);
  assert.equal(api.objects.get('web')!.metadata!.annotations![REPLICAS_ANNOTATION], '2');
  assert.deepEqual(notices, ["deployment web was redeployed with 2 replicas: scaled back to 0 while the dev container is active ('devtool down' restores 2)"]);
  assert.ok(!api.calls.some((c) => c.startsWith('replace')), 'same pod template: the mirror is not replaced');
});

test('a StatefulSet original is followed alike, and named as one', async () => {
  const api = activated();
  api.kind = 'StatefulSet';
  const { notices } = start(api);
  await eventually('the watch is open', () => api.openWatches().length === 1);
  api.put(original({ replicas: 3 }));
  await eventually('the original is back at 0', () => replicasOf(api, 'web') === 0);
  api.put(original({ image: 'web:2' }));
  await eventually('the mirror is replaced', () => api.objects.get(MIRROR)!.spec!.template.spec!.containers[0]!.image === 'web:2');
  assert.deepEqual(notices, [
    "statefulset web was redeployed with 3 replicas: scaled back to 0 while the dev container is active ('devtool down' restores 3)",
    'statefulset web changed: dev container web-dev updated to match (its pod restarts with the new settings)',
  ]);
});

test("a change of the original's pod template replaces the mirror with one rebuilt from it", async () => {
  const api = activated();
  const { notices } = start(api);
  await eventually('the watch is open', () => api.openWatches().length === 1);
  api.put(original({ image: 'web:2' }));
  await eventually('the mirror runs web:2', () => api.objects.get(MIRROR)!.spec!.template.spec!.containers[0]!.image === 'web:2');
  assert.equal(api.objects.get(MIRROR)!.metadata!.annotations![SPEC_HASH_ANNOTATION], 'hash-web:2');
  assert.deepEqual(notices, ['deployment web changed: dev container web-dev updated to match (its pod restarts with the new settings)']);
});

test('a mirror that down removed is never created again, whatever the original does', async () => {
  const api = activated();
  const { notices } = start(api);
  await eventually('the watch is open', () => api.openWatches().length === 1);
  api.remove(MIRROR);
  api.put(original({ image: 'web:3' }));
  await eventually('the mirror was looked up', () => api.calls.includes(`read ${MIRROR}`));
  await new Promise((r) => setTimeout(r, 50));
  assert.equal(api.objects.has(MIRROR), false);
  assert.deepEqual(notices, []);
});

test("an original that down restored (devtool's annotations gone) is left alone", async () => {
  const api = activated();
  const { notices } = start(api);
  await eventually('the watch is open', () => api.openWatches().length === 1);
  api.put(original({ ours: false, replicas: 3 }));
  await new Promise((r) => setTimeout(r, 100));
  assert.equal(replicasOf(api, 'web'), 3);
  assert.ok(!api.calls.some((c) => c.startsWith('patch') || c.startsWith('replace')), api.calls.join('; '));
  assert.deepEqual(notices, []);
});

test('a write that meets a change (409) reads the original again and retries', async () => {
  const api = activated();
  start(api);
  await eventually('the watch is open', () => api.openWatches().length === 1);
  api.conflicts = 2;
  api.put(original({ replicas: 4 }));
  await eventually('the original is back at 0', () => replicasOf(api, 'web') === 0);
  assert.deepEqual(
    api.calls.filter((c) => /^(patch|read) web$/.test(c)),
    ['patch web', 'read web', 'patch web', 'read web', 'patch web'],
  );
});

test('deleted, then created anew without annotations: said once, then scaled to zero as recreated', async () => {
  const api = activated();
  const { notices } = start(api);
  await eventually('the watch is open', () => api.openWatches().length === 1);
  api.remove('web');
  api.put(original({ uid: 'uid-2', ours: false, replicas: 1 }), 'ADDED');
  await eventually('the new original is at 0', () => replicasOf(api, 'web') === 0);
  assert.deepEqual(notices, [
    'deployment web was deleted; the dev container keeps running and is reactivated if it comes back',
    "deployment web was recreated with 1 replica: scaled back to 0 while the dev container is active ('devtool down' restores 1)",
  ]);
});

test('a watch the server ends (410 Gone) or that drops is listed and watched again, from the new list', async () => {
  const api = activated();
  start(api);
  await eventually('the watch is open', () => api.openWatches().length === 1);
  api.endWatches({ gone: true });
  await eventually('watched again', () => api.watchers.length === 2 && api.openWatches().length === 1);
  api.endWatches({ err: new Error('socket hang up') });
  await eventually('watched a third time', () => api.watchers.length === 3 && api.openWatches().length === 1);
  assert.deepEqual(
    api.calls.filter((c) => c.startsWith('list') || c.startsWith('watch')),
    ['list web', 'watch web from 102', 'list web', 'watch web from 102', 'list web', 'watch web from 102'],
  );
});

test('while the API server is away the loop keeps re-listing, and catches up on what changed meanwhile', async () => {
  const api = activated();
  const { notices } = start(api);
  await eventually('the watch is open', () => api.openWatches().length === 1);
  api.failLists = 3;
  api.endWatches({ err: Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }) });
  // A redeploy nobody watched: the re-list after the outage sees it.
  const stored = api.objects.get('web')!;
  api.objects.set('web', { ...stored, metadata: { ...stored.metadata, resourceVersion: '150' }, spec: { ...stored.spec!, replicas: 2 } });
  await eventually('the original is back at 0', () => replicasOf(api, 'web') === 0);
  assert.equal(api.calls.filter((c) => c === 'list web').length, 5, 'the first list, three failures, then the one that worked');
  assert.equal(notices.length, 1);
  assert.match(notices[0]!, /redeployed with 2 replicas/);
});

test('stop() ends the watch and the loop: nothing is asked of the API server after it', async () => {
  const api = activated();
  start(api);
  await eventually('the watch is open', () => api.openWatches().length === 1);
  watches[0]!.stop();
  assert.equal(api.openWatches().length, 0, 'the open watch is aborted');
  const asked = api.calls.length;
  await new Promise((r) => setTimeout(r, 100));
  assert.equal(api.calls.length, asked);
});
