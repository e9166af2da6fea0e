import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { DevtoolError } from '../base/errors.ts';
import { loadComposeWithSecrets, type StoredSecrets, storedSecretsOnce } from './stored-secrets.ts';

const dirs: string[] = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function project(compose: string, dotenv?: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'stored-secrets-'));
  dirs.push(dir);
  writeFileSync(join(dir, 'compose.yaml'), compose);
  if (dotenv !== undefined) writeFileSync(join(dir, '.env'), dotenv);
  return dir;
}

/** A stored-secrets source that counts the calls the service would get. */
function fakeStored(values: Record<string, string>): StoredSecrets & { calls: string[][] } {
  const calls: string[][] = [];
  const once = storedSecretsOnce(async (needed) => {
    calls.push([...needed]);
    return values;
  });
  return { calls, values: once.values };
}

const envOf = (p: Awaited<ReturnType<typeof loadComposeWithSecrets>>) => Object.fromEntries(p.services.find((s) => s.name === 'web')!.environment);

test('precedence: the shell over .env over stored secrets, each variable on its own', async () => {
  const dir = project('services:\n  web:\n    image: nginx\n    environment:\n      A: ${A}\n      B: ${B}\n      C: ${C}\n', 'A=from-dotenv\nB=from-dotenv\n');
  const stored = fakeStored({ A: 'from-stored', B: 'from-stored', C: 'from-stored' });
  const p = await loadComposeWithSecrets({ cwd: dir, env: { A: 'from-shell' } }, stored);
  assert.deepEqual(envOf(p), { A: 'from-shell', B: 'from-dotenv', C: 'from-stored' });
  assert.deepEqual(stored.calls, [['C']], 'asked once, naming only what shell and .env leave unset');
  assert.ok(!p.warnings.some((w) => w.includes('variable C')), 'no "not set" warning for a stored secret');
});

test('no call to the service when the shell and .env set everything', async () => {
  const dir = project('services:\n  web:\n    image: nginx\n    environment:\n      A: ${A}\n      B: $B\n', 'B=b\n');
  const stored = fakeStored({ A: 'stored', B: 'stored' });
  const p = await loadComposeWithSecrets({ cwd: dir, env: { A: 'shell' } }, stored);
  assert.deepEqual(envOf(p), { A: 'shell', B: 'b' });
  assert.equal(stored.calls.length, 0);
});

test('no call when no variable is referenced, nor for build args (local machine only)', async () => {
  const dir = project('services:\n  web:\n    image: nginx\n    build:\n      context: .\n      args:\n        LOCAL: ${LOCAL}\n');
  const stored = fakeStored({ LOCAL: 'stored' });
  const p = await loadComposeWithSecrets({ cwd: dir, env: {} }, stored);
  assert.equal(stored.calls.length, 0);
  assert.equal(p.services[0]!.build?.args.get('LOCAL'), '');
});

test('a stored secret fills ${NAME:?} and wins over a ${NAME:-default}', async () => {
  const dir = project(
    'services:\n  web:\n    image: nginx\n    environment:\n      R: ${R:?R is required}\n      D: ${D:-fallback}\n      U: ${U:-fallback}\n',
  );
  const stored = fakeStored({ R: 'stored-r', D: 'stored-d' });
  const p = await loadComposeWithSecrets({ cwd: dir, env: {} }, stored);
  assert.deepEqual(envOf(p), { R: 'stored-r', D: 'stored-d', U: 'fallback' });
  assert.equal(stored.calls.length, 1);
});

test('a required variable that no source sets still fails with its own message', async () => {
  const dir = project('services:\n  web:\n    image: nginx\n    environment:\n      R: ${R:?R is required}\n');
  const stored = fakeStored({ OTHER: 'x' });
  await assert.rejects(loadComposeWithSecrets({ cwd: dir, env: {} }, stored), /R is required/);
});

test('an unreachable service is an error, never an empty value in silence', async () => {
  const dir = project('services:\n  web:\n    image: nginx\n    environment:\n      A: ${A}\n');
  const stored: StoredSecrets = {
    values: async () => {
      throw new DevtoolError('cannot reach the devtool service at https://svc.example: nothing listens there (ECONNREFUSED)');
    },
  };
  await assert.rejects(loadComposeWithSecrets({ cwd: dir, env: {} }, stored), /ECONNREFUSED/);
});

test('without a stored-secrets source (a plain cluster) an unset variable is empty with a warning, as before', async () => {
  const dir = project('services:\n  web:\n    image: nginx\n    environment:\n      A: ${A}\n');
  const p = await loadComposeWithSecrets({ cwd: dir, env: {} }, undefined);
  assert.deepEqual(envOf(p), { A: '' });
  assert.ok(p.warnings.includes('variable A is not set: using an empty string'));
});

test('storedSecretsOnce fetches once for any number of Compose loads (a manifest and its dependencies)', async () => {
  const dir = project('services:\n  web:\n    image: nginx\n    environment:\n      A: ${A}\n');
  const stored = fakeStored({ A: 'stored' });
  await loadComposeWithSecrets({ cwd: dir, env: {} }, stored);
  await loadComposeWithSecrets({ cwd: dir, env: {} }, stored);
  assert.equal(stored.calls.length, 1);
});
