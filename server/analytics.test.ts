import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createAccount } from './accounts.ts';
import { buildApp, type ServiceConfig } from './app.ts';
import { MAX_ACTIONS, Metrics } from './metrics.ts';
import { MemoryStore } from './store/memory.ts';

const SCRAPER_TOKEN = 'scrape-me-please';
const CONFIG: ServiceConfig = { version: '9.9.9', rateLimit: { max: 1000, timeWindowMs: 60_000 }, metricsToken: SCRAPER_TOKEN };
const SCRAPE = { method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${SCRAPER_TOKEN}` } } as const;

async function harness(config: Partial<ServiceConfig> = {}) {
  const store = new MemoryStore();
  const app = await buildApp({ store, config: { ...CONFIG, ...config }, logStream: false });
  return { app, store };
}

const record = (action: string, success = true) => ({
  action,
  timestamp: '2026-01-01T00:00:00.000Z',
  version: '0.1.0',
  os: 'linux/x64',
  machineId: '6f1c3b7e-0000-4000-8000-000000000000',
  actionId: '1d2e3f40-0000-4000-8000-000000000000',
  success,
});

/** The value of one sample line of the exposition text, or undefined when it is absent. */
function sample(text: string, line: string): number | undefined {
  const found = text.split('\n').find((l) => l.startsWith(`${line} `));
  return found === undefined ? undefined : Number(found.slice(line.length + 1));
}

describe('analytics and /metrics', () => {
  test('anonymous and authenticated batches are counted by action and outcome', async () => {
    const h = await harness();
    const { token } = await createAccount(h.store, 'zelda', false, new Date());
    const anon = await h.app.inject({ method: 'POST', url: '/api/v1/analytics', payload: { records: [record('deploy'), record('deploy', false)] } });
    assert.equal(anon.statusCode, 202);
    assert.deepEqual(anon.json(), { accepted: 2 });
    const authed = await h.app.inject({
      method: 'POST',
      url: '/api/v1/analytics',
      headers: { authorization: `Bearer ${token}` },
      payload: { records: [record('deploy'), record('context use'), { ...record('up'), userId: 'zelda' }] },
    });
    assert.equal(authed.statusCode, 202);
    const res = await h.app.inject(SCRAPE);
    assert.equal(res.statusCode, 200);
    assert.match(String(res.headers['content-type']), /^text\/plain; version=0\.0\.4/);
    assert.equal(sample(res.body, 'devtool_analytics_records_total{action="deploy",success="true"}'), 2);
    assert.equal(sample(res.body, 'devtool_analytics_records_total{action="deploy",success="false"}'), 1);
    assert.equal(sample(res.body, 'devtool_analytics_records_total{action="context use",success="true"}'), 1);
    assert.equal(sample(res.body, 'devtool_analytics_records_total{action="up",success="true"}'), 1);
    assert.ok(!res.body.includes(token), 'a token in the metrics');
    assert.ok(!res.body.includes('zelda'), 'a user in the metrics');
  });

  test('a bad token is refused even though tokens are optional; bad batches get one line', async () => {
    const h = await harness();
    const bad = await h.app.inject({
      method: 'POST',
      url: '/api/v1/analytics',
      headers: { authorization: 'Bearer dvt_0000000000000000000000000000000000000000000' },
      payload: { records: [record('deploy')] },
    });
    assert.equal(bad.statusCode, 401);
    const empty = await h.app.inject({ method: 'POST', url: '/api/v1/analytics', payload: { records: [] } });
    assert.equal(empty.statusCode, 400);
    assert.match(empty.json().error, /^body\.records/);
    const label = await h.app.inject({ method: 'POST', url: '/api/v1/analytics', payload: { records: [record('x"} 1\nevil')] } });
    assert.equal(label.statusCode, 400);
    assert.match(label.json().error, /body\.records\.0\.action/);
    const tooMany = await h.app.inject({ method: 'POST', url: '/api/v1/analytics', payload: { records: Array.from({ length: 101 }, () => record('deploy')) } });
    assert.equal(tooMany.statusCode, 400);
    const metrics = (await h.app.inject(SCRAPE)).body;
    assert.equal(sample(metrics, 'devtool_analytics_records_total{action="deploy",success="true"}'), undefined, 'a refused batch was counted');
  });

  test('requests are counted by route template, method and status, with a duration histogram', async () => {
    const h = await harness();
    const { token } = await createAccount(h.store, 'bob', false, new Date());
    await h.app.inject({ method: 'PUT', url: '/api/v1/secrets/API_KEY', headers: { authorization: `Bearer ${token}` }, payload: { value: 'hunter2-value' } });
    await h.app.inject({ method: 'GET', url: '/api/v1/secret-values', headers: { authorization: `Bearer ${token}` } });
    await h.app.inject({ method: 'GET', url: '/api/v1/me' });
    await h.app.inject({ method: 'GET', url: '/no/such/path/dvt_sneaky' });
    await h.app.inject({ method: 'GET', url: '/healthz' });
    const text = (await h.app.inject(SCRAPE)).body;
    assert.equal(sample(text, 'devtool_http_requests_total{route="/api/v1/secrets/:name",method="PUT",status="204"}'), 1);
    assert.equal(sample(text, 'devtool_http_requests_total{route="/api/v1/secret-values",method="GET",status="200"}'), 1);
    assert.equal(sample(text, 'devtool_http_requests_total{route="/api/v1/me",method="GET",status="401"}'), 1);
    assert.equal(sample(text, 'devtool_http_requests_total{route="unmatched",method="GET",status="404"}'), 1);
    assert.equal(sample(text, 'devtool_http_requests_total{route="/healthz",method="GET",status="200"}'), 1);
    assert.equal(sample(text, 'devtool_http_request_duration_seconds_count{route="/api/v1/me",method="GET"}'), 1);
    assert.equal(sample(text, 'devtool_http_request_duration_seconds_bucket{route="/api/v1/me",method="GET",le="+Inf"}'), 1);
    assert.ok(sample(text, 'devtool_http_request_duration_seconds_sum{route="/api/v1/me",method="GET"}')! >= 0);
    for (const leak of ['API_KEY', 'hunter2', token, 'sneaky']) assert.ok(!text.includes(leak), `${leak} in the metrics`);
  });

  test('DEVTOOL_METRICS_TOKEN guards /metrics; without it there is none', async () => {
    const off = await harness({ metricsToken: undefined });
    const none = await off.app.inject({ method: 'GET', url: '/metrics' });
    assert.equal(none.statusCode, 404);
    assert.match(none.json<{ error: string }>().error, /^metrics are off: .*DEVTOOL_METRICS_TOKEN/);
    const h = await harness();
    assert.equal((await h.app.inject({ method: 'GET', url: '/metrics' })).statusCode, 401);
    assert.equal((await h.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: 'Bearer nope' } })).statusCode, 401);
    assert.equal((await h.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: 'Bearer scrape-me-please' } })).statusCode, 200);
  });

  test('distinct actions are capped; later ones count as "other"', () => {
    const m = new Metrics();
    for (let i = 0; i < MAX_ACTIONS + 5; i++) m.recordAnalytics(`a${i}`, true);
    m.recordAnalytics('a0', true);
    const text = m.render();
    assert.equal(sample(text, 'devtool_analytics_records_total{action="other",success="true"}'), 5);
    assert.equal(sample(text, 'devtool_analytics_records_total{action="a0",success="true"}'), 2);
  });

  test('the histogram is cumulative', () => {
    const m = new Metrics();
    m.recordRequest('/x', 'GET', 200, 0.003);
    m.recordRequest('/x', 'GET', 200, 0.2);
    m.recordRequest('/x', 'GET', 200, 30);
    const text = m.render();
    assert.equal(sample(text, 'devtool_http_request_duration_seconds_bucket{route="/x",method="GET",le="0.005"}'), 1);
    assert.equal(sample(text, 'devtool_http_request_duration_seconds_bucket{route="/x",method="GET",le="0.25"}'), 2);
    assert.equal(sample(text, 'devtool_http_request_duration_seconds_bucket{route="/x",method="GET",le="10"}'), 2);
    assert.equal(sample(text, 'devtool_http_request_duration_seconds_bucket{route="/x",method="GET",le="+Inf"}'), 3);
    assert.equal(sample(text, 'devtool_http_request_duration_seconds_count{route="/x",method="GET"}'), 3);
  });
});
