import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { createAccount } from './accounts.ts';
import { buildApp } from './app.ts';
import { readSettings } from './config.ts';
import type { KubeTokenIssuer } from './kube-credentials.ts';
import { MemoryStore } from './store/memory.ts';
import { hashToken } from './tokens.ts';

const CA = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';
const NOW = new Date('2026-01-01T00:00:00Z');

/** Stands for TokenRequest: records whose ServiceAccount each token was asked for. */
class FakeIssuer implements KubeTokenIssuer {
  readonly asked: { user: string; seconds: number; boundTo?: string }[] = [];
  async issue(user: string, seconds: number, boundTo?: { name: string; uid: string }) {
    this.asked.push({ user, seconds, ...(boundTo ? { boundTo: `${boundTo.name}/${boundTo.uid}` } : {}) });
    return { token: `sa-token-of-${user}-${this.asked.length}`, expiresAt: new Date(NOW.getTime() + seconds * 1000).toISOString() };
  }
}

async function harness(withSource = true) {
  const store = new MemoryStore();
  const issuer = new FakeIssuer();
  const app = await buildApp({
    store,
    config: { version: '1', rateLimit: { max: 1000, timeWindowMs: 60_000 } },
    now: () => NOW,
    logStream: false,
    ...(withSource ? { kubeCredentials: { server: 'https://k8s.example:6443', certificateAuthority: CA, tokenSeconds: 900, issuer } } : {}),
  });
  const alice = await createAccount(store, 'alice', false, NOW);
  const bob = await createAccount(store, 'bob', true, NOW);
  return { app, store, issuer, alice, bob };
}

describe('kube credentials route', () => {
  test("gives each user a token of their own ServiceAccount, the API server and its CA; nothing of the service's", async () => {
    const h = await harness();
    const res = await h.app.inject({ method: 'POST', url: '/api/v1/kube-credentials', headers: { authorization: `Bearer ${h.alice.token}` } });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json(), {
      server: 'https://k8s.example:6443',
      certificateAuthority: CA,
      token: 'sa-token-of-alice-1',
      expiresAt: '2026-01-01T00:15:00.000Z',
    });
    const other = await h.app.inject({ method: 'POST', url: '/api/v1/kube-credentials', headers: { authorization: `Bearer ${h.bob.token}` } });
    assert.equal(other.json().token, 'sa-token-of-bob-2');
    // Each bound to the API token it was asked with: revoking that token ends it.
    const objectOf = async (token: string) => (await h.store.findToken(hashToken(token)))!.objectRef!;
    const [a, b] = [await objectOf(h.alice.token), await objectOf(h.bob.token)];
    assert.deepEqual(h.issuer.asked, [
      { user: 'alice', seconds: 900, boundTo: `${a.name}/${a.uid}` },
      { user: 'bob', seconds: 900, boundTo: `${b.name}/${b.uid}` },
    ]);
  });

  test('refused without a valid token, and 503 in one line when the operator set no API server', async () => {
    const h = await harness();
    const anonymous = await h.app.inject({ method: 'POST', url: '/api/v1/kube-credentials' });
    assert.equal(anonymous.statusCode, 401);
    assert.equal(h.issuer.asked.length, 0, 'no token issued for an anonymous caller');
    const bare = await harness(false);
    const res = await bare.app.inject({ method: 'POST', url: '/api/v1/kube-credentials', headers: { authorization: `Bearer ${bare.alice.token}` } });
    assert.equal(res.statusCode, 503);
    assert.deepEqual(res.json(), {
      error: 'this devtool service hands out no Kubernetes credentials: its operator has not set DEVTOOL_KUBE_SERVER',
    });
  });

  test('settings: DEVTOOL_KUBE_SERVER, the CA file and the token lifetime, each wrong one named', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kube-settings-'));
    const ca = join(dir, 'ca.crt');
    writeFileSync(ca, CA);
    assert.equal(readSettings({ POD_NAMESPACE: 'd' }).kube, undefined);
    assert.deepEqual(readSettings({ POD_NAMESPACE: 'd', DEVTOOL_KUBE_SERVER: 'https://k8s:6443/', DEVTOOL_KUBE_CA_FILE: ca }).kube, {
      server: 'https://k8s:6443',
      certificateAuthority: CA,
      tokenSeconds: 3600,
    });
    const base = { POD_NAMESPACE: 'd', DEVTOOL_KUBE_SERVER: 'https://k8s:6443', DEVTOOL_KUBE_CA_FILE: ca };
    assert.equal(readSettings({ ...base, DEVTOOL_KUBE_TOKEN_SECONDS: '600' }).kube?.tokenSeconds, 600);
    assert.throws(() => readSettings({ ...base, DEVTOOL_KUBE_TOKEN_SECONDS: '60' }), /^Error: DEVTOOL_KUBE_TOKEN_SECONDS=60: at least 600/);
    assert.throws(() => readSettings({ ...base, DEVTOOL_KUBE_SERVER: 'k8s:6443' }), /^Error: DEVTOOL_KUBE_SERVER=k8s:6443: expected/);
    assert.throws(() => readSettings({ ...base, DEVTOOL_KUBE_CA_FILE: join(dir, 'none') }), /^Error: DEVTOOL_KUBE_CA_FILE=.*none: ENOENT/);
    writeFileSync(join(dir, 'bad'), 'hello');
    assert.throws(() => readSettings({ ...base, DEVTOOL_KUBE_CA_FILE: join(dir, 'bad') }), /not a PEM certificate/);
  });
});
