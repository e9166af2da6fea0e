import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BinaryReader, BinaryWriter, WireType } from '@bufbuild/protobuf/wire';
import { answer, sessionHeaders, SESSION_METHODS, type SessionProvider } from './docker-session.ts';

const dir = mkdtempSync(join(tmpdir(), 'session-'));
writeFileSync(join(dir, 'npmrc'), 'token=abc');
const provider: SessionProvider = {
  secrets: { npm: join(dir, 'npmrc'), gone: join(dir, 'missing') },
  credentials: async (host) => (host === 'private.io' ? { username: 'me', password: 'pw' } : host === 'token.io' ? { identityToken: 'refresh' } : undefined),
};
const request = (field: number, value: string) => new BinaryWriter().tag(field, WireType.LengthDelimited).string(value).finish();

function fields(buf: Uint8Array): Record<number, string> {
  const r = new BinaryReader(buf);
  const out: Record<number, string> = {};
  while (r.pos < r.len) {
    const [f, wire] = r.tag();
    out[f] = wire === WireType.Varint ? String(r.int32()) : r.string();
  }
  return out;
}

test('health checks answer SERVING', async () => {
  assert.deepEqual(fields(await answer('/grpc.health.v1.Health/Check', new Uint8Array(), provider)), { 1: '1' });
});

test('secrets are read from their files; an unknown id or an unreadable file is NOT_FOUND', async () => {
  assert.deepEqual(fields(await answer('/moby.buildkit.secrets.v1.Secrets/GetSecret', request(1, 'npm'), provider)), { 1: 'token=abc' });
  await assert.rejects(
    answer('/moby.buildkit.secrets.v1.Secrets/GetSecret', request(1, 'other'), provider),
    (e: { code: number; message: string }) => e.code === 5 && /--secret id=other/.test(e.message),
  );
  await assert.rejects(answer('/moby.buildkit.secrets.v1.Secrets/GetSecret', request(1, 'gone'), provider), (e: { code: number }) => e.code === 5);
});

test('credentials: username and password, an identity token as Secret alone, or nothing', async () => {
  const creds = (host: string) => answer('/moby.filesync.v1.Auth/Credentials', request(1, host), provider).then(fields);
  assert.deepEqual(await creds('private.io'), { 1: 'me', 2: 'pw' });
  assert.deepEqual(await creds('token.io'), { 2: 'refresh' });
  assert.deepEqual(await creds('localhost:5000'), {});
});

test('other methods are UNIMPLEMENTED, and only served methods are announced', async () => {
  await assert.rejects(answer('/moby.filesync.v1.Auth/FetchToken', new Uint8Array(), provider), (e: { code: number }) => e.code === 12);
  assert.deepEqual(sessionHeaders('id-1')['X-Docker-Expose-Session-Grpc-Method'], SESSION_METHODS);
  assert.equal(SESSION_METHODS.length, 3);
});
