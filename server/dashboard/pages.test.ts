/** The dashboard's pages rendered from given data: exact HTML of the parts that carry data, and escaping. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { assertGolden } from '../../test/golden.ts';
import { homePage, homeSections } from './home-page.ts';
import { when } from './model.ts';
import { namespacePage, namespaceSections } from './namespace-page.ts';
import type { NamespaceSnapshot } from './model.ts';
import type { DevSessionState } from '../../api/dev-session.ts';

const golden = (name: string) => fileURLToPath(new URL(`testdata/${name}`, import.meta.url));

const NOW = new Date('2026-12-02T12:00:00Z');

const snapshot: NamespaceSnapshot = {
  environments: [
    { name: 'shop', status: 'deployed', source: 'compose', updated: '2026-12-02T10:00:00Z' },
    { name: 'api', status: 'error', source: 'manifest', updated: '2026-12-02T11:30:00Z', error: 'rollout of <api> timed out' },
    { name: 'preview', status: 'deployed', source: 'compose', updated: '' },
  ],
  workloads: [{ kind: 'Deployment', name: 'web', desired: 2, ready: 1, environment: 'shop', selector: { app: 'web' } }],
  pods: [
    { name: 'web-1', status: 'Running', ready: true, restarts: 0, labels: { app: 'web' }, containers: [] },
    { name: 'web-2', status: 'CrashLoopBackOff', ready: false, restarts: 4, lastFailure: 'Error, exit code 1', labels: { app: 'web' }, containers: [] },
    { name: 'debug', status: 'Pending', ready: false, restarts: 0, labels: {}, containers: [] },
  ],
  ingresses: [{ name: 'web', environment: 'shop', hosts: ['web-shop.devtool.test'] }],
};

describe('dashboard pages, rendered', () => {
  test('the environments section: source (a pipeline named), status with the error, when, endpoints as links', () => {
    const s = namespaceSections({ user: 'ann', name: 'shop', owner: 'ann', status: 'Active', snapshot, pipelines: new Set(['preview']), runs: [], now: NOW });
    assertGolden(golden('environments.html'), s.environments.text);
  });

  test('the workloads section: ready counts, each pod with status, restarts and last failure; pods of no workload apart', () => {
    const s = namespaceSections({ user: 'ann', name: 'shop', owner: 'ann', status: 'Active', snapshot, pipelines: new Set(), runs: [], now: NOW });
    assertGolden(golden('workloads.html'), s.workloads.text);
    const empty = namespaceSections({
      user: 'ann',
      name: 'x',
      owner: 'ann',
      status: 'Active',
      snapshot: { environments: [], workloads: [], pods: [], ingresses: [] },
      pipelines: new Set(),
      runs: [],
      now: NOW,
    });
    assert.equal(empty.workloads.text, '<p class="muted">No Deployments or StatefulSets.</p>');
    assert.equal(empty.environments.text, '<p class="muted">No environment deployed with devtool.</p>');
  });

  test('the dev containers: whose, since when, connection, sync, conflict copies, forwards; a silent or ended session as such', () => {
    const session = (over: Partial<DevSessionState>): DevSessionState => ({
      format: 1,
      user: 'ann',
      version: '0.1.0',
      startedAt: '2026-12-02T11:00:00Z',
      heartbeatAt: '2026-12-02T11:59:40Z',
      sync: { state: 'watching' },
      conflicts: { total: 0, latest: [] },
      forwards: [],
      connection: { state: 'connected' },
      ...over,
    });
    const dev = (name: string, s: DevSessionState) => ({ kind: 'Deployment' as const, name, desired: 1, ready: 1, selector: { app: name }, session: s });
    const workloads = [
      dev('api-devtool', session({ forwards: [{ local: 8080, remote: 'api:80' }] })),
      dev(
        'web-devtool',
        session({ user: 'cid', sync: { state: 'syncing', toReceive: 2, toSend: 5 }, conflicts: { total: 3, latest: ['src/a.sync-conflict-1.ts'] } }),
      ),
      dev('db-devtool', session({ heartbeatAt: '2026-12-02T11:50:00Z' })),
      dev('old-devtool', session({ endedAt: '2026-12-02T11:30:00Z', connection: { state: 'reconnecting', since: '2026-12-02T11:29:00Z' } })),
      dev(
        'far-devtool',
        session({ sync: { state: 'error', error: 'folder <src> is gone' }, connection: { state: 'reconnecting', since: '2026-12-02T11:58:00Z' } }),
      ),
    ];
    const s = namespaceSections({
      user: 'ann',
      name: 'shop',
      owner: 'ann',
      status: 'Active',
      snapshot: { ...snapshot, workloads },
      pipelines: new Set(),
      runs: [],
      now: NOW,
    });
    assertGolden(golden('sessions.html'), s.sessions.text);
    assert.match(s.sessions.text, /<tr data-session="db-devtool">.*not heard from<\/span> since 2026-12-02 11:50 UTC/s);
    const none = namespaceSections({ user: 'ann', name: 'shop', owner: 'ann', status: 'Active', snapshot, pipelines: new Set(), runs: [], now: NOW });
    assert.equal(none.sessions.text, '<p class="muted">No dev container is up.</p>');
  });

  test('the namespace page: one navigation, the live region, the script by path, the sections in place', () => {
    // What the page and its live sections are rendered from, but the pipeline runs.
    const shop = {
      user: 'ann',
      csrf: 'c1',
      name: 'shop',
      owner: 'ann',
      status: 'Active',
      sleepable: true,
      sleepsAt: '2026-12-02T15:00:00Z',
      snapshot,
      pipelines: new Set<string>(),
      now: NOW,
    } as const;
    const p = namespacePage({
      ...shop,
      script: '/assets/live-x.js',
      runs: [
        {
          name: 'shop',
          namespace: 'shop',
          status: 'deployed',
          action: 'deploy',
          repository: 'https://git.example.com/shop.git',
          clonedBranch: 'main',
          commit: '0123456789abcdef0123',
          job: 'devtool-run-shop-abc',
          runId: 'abc',
          startedAt: '2026-12-02T11:00:00Z',
          finishedAt: '2026-12-02T11:02:05Z',
        },
      ],
    });
    assertGolden(golden('namespace-page.html'), p);
    assert.match(p, /<a href="\/namespaces\/shop\/logs\/deployments\/web" aria-label="Logs of web">Logs<\/a>/);
    assert.match(p, /<a href="\/namespaces\/shop\/pipelines\/shop">shop<\/a>.*<code>0123456789ab<\/code>.*2 min 5 s/s);
    assert.match(p, /<li><a href="\/account\/secrets">Stored secrets<\/a><\/li>/);
    assert.match(p, /<script src="\/assets\/live-x\.js" defer><\/script><\/head>/);
    assert.doesNotMatch(p, /Admin/, 'a plain user has no Admin entry');
    assert.match(p, /<div data-live="\/namespaces\/shop\/events">/);
    assert.match(p, /status <span id="ns-status">Active<\/span> · <span class="muted" data-announcement>sleeps at 2026-12-02 15:00 UTC unless used<\/span>/);
    assert.match(
      p,
      /<div id="ns-actions"><div><form class="inline" method="post" action="\/namespaces\/shop\/sleep">.*"back" value="\/namespaces\/shop">.*Sleep<\/button>/,
    );
    // Every live section is exactly what the page holds, so an update never changes more than the change.
    const s = namespaceSections({ ...shop, runs: [] });
    for (const id of ['ns-state', 'ns-actions', 'environments', 'sessions', 'workloads'] as const) assert.ok(p.includes(`id="${id}">${s[id].text}</`), id);
    assert.match(p, /<span id="live-status" role="status" class="muted">Not live<\/span>/);
    assert.match(p, /<main id="main"><h1>Namespace shop<\/h1>/);
  });

  test('Home: namespaces with status, owner and what runs; delete only where allowed; previews; the create form with CSRF', () => {
    const p = homePage({
      user: 'ann',
      csrf: 'tok"en',
      namespaces: [
        {
          name: 'ann-devtool',
          status: 'Active',
          owner: 'ann',
          personal: true,
          deletable: false,
          sleepable: true,
          running: { environments: 0, ready: 0, total: 0 },
        },
        {
          ...{
            name: 'shop',
            status: 'Sleeping since 2026-12-02 10:00 UTC (by ann)',
            sleep: 'Sleeping' as const,
            owner: 'ann',
            personal: false,
            deletable: true,
            sleepable: true,
          },
          ...{ running: { environments: 2, ready: 1, total: 3 }, lastActivity: '2026-12-02T09:58:00Z', deletesAt: '2026-12-16T09:58:00Z' },
        },
        { name: 'old', status: 'Terminating', owner: 'ann', personal: false, deletable: false, sleepable: false },
      ],
      previews: [
        {
          name: 'main',
          status: 'Sleeping',
          owner: 'root',
          personal: false,
          deletable: false,
          sleepable: false,
          running: { environments: 1, ready: 0, total: 0 },
          preview: {
            scope: 'global',
            sourceUrl: 'javascript:alert(1)',
            sleeping: true,
            destroying: false,
            mayRedeploy: false,
            maySleep: false,
            mayDestroy: false,
          },
        },
      ],
    });
    assert.match(p, /<a href="\/" aria-current="page">Home<\/a>/);
    assertGolden(golden('home.html'), p);
    assert.doesNotMatch(p, /action="\/namespaces\/ann-devtool\/delete"/, 'a personal namespace has no delete');
    assert.doesNotMatch(p, /action="\/namespaces\/old\/delete"/, 'no delete where it may not be deleted');
    assert.match(p, /action="\/namespaces\/shop\/delete"/, 'a sleeping namespace can be deleted');
    assert.match(p, /action="\/namespaces\/shop\/wake">.*<button aria-label="Wake shop">Wake<\/button>/, 'a sleeping one has Wake');
    assert.match(p, /action="\/namespaces\/ann-devtool\/sleep">.*<button aria-label="Sleep ann-devtool">Sleep<\/button>/, 'an awake one has Sleep');
    assert.doesNotMatch(p, /action="\/namespaces\/(old|main)\/(sleep|wake)"/, 'no sleep or wake where the viewer may not');
    assert.match(p, /<span class="muted">global preview<\/span> · source <code>javascript:alert\(1\)<\/code>/, 'a source link only for http(s)');
    assert.match(p, /action="\/previews\/main\/wake">.*<button aria-label="Wake main">Wake<\/button>/, 'anyone wakes a global preview');
    assert.doesNotMatch(p, /\/previews\/main\/(sleep|destroy)/, 'only admins sleep or destroy a global preview');
    assert.match(p, /<span class="muted" data-announcement>deleted at 2026-12-16 09:58 UTC unless used<\/span>/);
    assert.match(p, /<div id="previews"><table class="cards">.*<td data-label="Status">Sleeping<\/td><td data-label="Owner">root<\/td>/s);
    assert.match(p, /<form method="post" action="\/namespaces" id="create-namespace"><input type="hidden" name="csrf" value="tok&quot;en">/);
  });

  test('Home without namespaces or previews says so; times are shown in UTC', () => {
    const p = homePage({ user: 'ann', namespaces: [], previews: [] });
    assert.match(p, /<h2>Your namespaces<\/h2><div id="namespaces"><p class="muted">None\.<\/p><\/div>/);
    assert.doesNotMatch(p, /<form/, 'no forms without a session');
    assert.doesNotMatch(p, /<script|data-live|live-status/, 'not live without the script');
    assert.equal(when('2026-12-02T13:21:59.123Z'), '2026-12-02 13:21 UTC');
    assert.equal(when(''), '');
  });

  test('Home live: the script, its stream and the Live line; each live section is what the page holds', () => {
    const d = {
      user: 'ann',
      csrf: 'c',
      namespaces: [{ name: 'shop', status: 'Active', owner: 'ann', personal: false, deletable: true, sleepable: true }],
      previews: [],
    };
    const p = homePage({ ...d, script: '/assets/live-x.js' });
    assert.match(p, /<script src="\/assets\/live-x\.js" defer><\/script>/);
    assert.match(p, /<p><span id="live-status" role="status" class="muted">Not live<\/span><\/p><div data-live="\/events">/);
    const s = homeSections(d);
    assert.ok(p.includes(`<div id="namespaces">${s.namespaces.text}</div>`));
    assert.ok(p.includes(`<div id="previews">${s.previews.text}</div>`));
    assert.match(s.namespaces.text, /<tr data-namespace="shop">.*<button aria-label="Sleep shop">Sleep<\/button>/s);
  });
});
