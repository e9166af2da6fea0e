import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import type { KubeCredentialsBody } from '../../api/routes.ts';
import { execCredential, KubeCredentialCache, kubeCredentialFile, needsRefresh } from './kube-credentials.ts';

const at = (iso: string) => new Date(iso);

describe('kube credentials: the refresh decision', () => {
  test('a 1 h token is replaced 5 minutes before it expires; a 10 min one at three quarters of its life', () => {
    const hour = { fetchedAt: '2026-01-01T10:00:00Z', expiresAt: '2026-01-01T11:00:00Z' };
    assert.equal(needsRefresh(hour, at('2026-01-01T10:54:59Z')), false);
    assert.equal(needsRefresh(hour, at('2026-01-01T10:55:00Z')), true);
    const ten = { fetchedAt: '2026-01-01T10:00:00Z', expiresAt: '2026-01-01T10:10:00Z' };
    assert.equal(needsRefresh(ten, at('2026-01-01T10:07:29Z')), false);
    assert.equal(needsRefresh(ten, at('2026-01-01T10:07:30Z')), true);
    assert.equal(needsRefresh(ten, at('2026-01-01T12:00:00Z')), true, 'long expired');
    assert.equal(needsRefresh({ fetchedAt: 'x', expiresAt: '2026-01-01T10:10:00Z' }, at('2026-01-01T10:00:00Z')), true, 'unreadable dates');
  });

  test('the ExecCredential kubectl reads: client.authentication.k8s.io/v1, the token and its expiry in RFC 3339', () => {
    assert.deepEqual(JSON.parse(execCredential({ token: 'tok', expiresAt: '2026-01-01T11:00:00.000Z' })), {
      apiVersion: 'client.authentication.k8s.io/v1',
      kind: 'ExecCredential',
      status: { token: 'tok', expirationTimestamp: '2026-01-01T11:00:00Z' },
    });
  });
});

describe('kube credentials: the cache', () => {
  const setup = () => {
    const home = mkdtempSync(join(tmpdir(), 'kube-cred-'));
    const clock = { now: at('2026-01-01T10:00:00Z') };
    let issued = 0;
    const fetchFromService = async (): Promise<KubeCredentialsBody> => {
      issued++;
      return {
        server: 'https://k8s:6443',
        certificateAuthority: 'PEM',
        token: `t${issued}`,
        expiresAt: new Date(clock.now.getTime() + 600_000).toISOString(),
      };
    };
    const file = kubeCredentialFile(home, 'https://devtool.example', 'dvt_abc');
    const cache = () => new KubeCredentialCache(file, fetchFromService, () => clock.now);
    return { file, clock, cache, issued: () => issued };
  };

  test('asks the service once, keeps the answer 0600, and asks again only when the token is near its end', async () => {
    const s = setup();
    const c = s.cache();
    const [a, b] = await Promise.all([c.current(), c.current()]);
    assert.equal(a.token, 't1');
    assert.equal(b.token, 't1');
    assert.equal(s.issued(), 1, 'concurrent requests share one fetch');
    assert.equal(statSync(s.file).mode & 0o777, 0o600);
    assert.equal(JSON.parse(readFileSync(s.file, 'utf8')).token, 't1');
    s.clock.now = at('2026-01-01T10:07:00Z');
    assert.equal((await s.cache().current()).token, 't1', 'another process reads the cached token');
    s.clock.now = at('2026-01-01T10:08:00Z');
    assert.equal((await c.current()).token, 't2', 'refreshed before expiry');
    assert.equal(JSON.parse(readFileSync(s.file, 'utf8')).token, 't2');
    s.clock.now = at('2026-01-01T12:00:00Z');
    assert.equal((await c.current()).token, 't3', 'long past expiry: a new token, never the old one');
  });

  test('a removed or damaged cache file means a new token', async () => {
    const s = setup();
    await s.cache().current();
    writeFileSync(s.file, '{not json');
    assert.equal((await s.cache().current()).token, 't2');
    assert.ok(existsSync(s.file));
    assert.notEqual(kubeCredentialFile('/h', 'https://devtool.example', 'dvt_other'), s.file.replace(/^.*kube-credentials/, '/h/kube-credentials'));
  });
});
