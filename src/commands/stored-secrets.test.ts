import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { after, test } from 'node:test';
import type { ResolvedContext } from '../context/store.ts';
import { loadComposeWithSecrets } from '../compose/stored-secrets.ts';
import { Progress } from '../deploy/progress.ts';
import { Logger } from '../log/logger.ts';
import { DevtoolError } from '../base/errors.ts';
import type { RouteName } from '../../api/routes.ts';
import type { ServiceClient } from '../service/client.ts';
import { deploySecrets } from './stored-secrets.ts';

const SECRET = 'Sup3r-Secret-Value-77';
const dirs: string[] = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** The service's answers, by route name. */
function setup(compose: string, answers: Partial<Record<RouteName, () => Promise<unknown>>>) {
  const dir = mkdtempSync(join(tmpdir(), 'deploy-secrets-'));
  dirs.push(dir);
  writeFileSync(join(dir, 'compose.yaml'), compose);
  const logFile = join(dir, 'devtool.log');
  const terminal = new PassThrough();
  let shown = '';
  terminal.on('data', (c: Buffer) => (shown += c.toString()));
  const log = new Logger({ file: logFile, terminal, level: 'debug', now: () => new Date() });
  const calls: string[] = [];
  const service = async (target: { url: string; token?: string }) => {
    calls.push(`${target.url} ${target.token}`);
    return { call: (name: RouteName) => answers[name]!() } as ServiceClient;
  };
  const context = {
    name: 'https://svc.example',
    isDevtool: true,
    token: 'dvt_test',
    namespace: 'n',
    source: 'stored',
    host: 'https://svc.example',
  } as ResolvedContext;
  return { dir, logFile, log, service, context, calls, shown: () => shown };
}

test('a stored value never reaches devtool.log nor the text of an error', async () => {
  // The value lands where the loader quotes it in its complaint: a port that is not one.
  const s = setup('services:\n  web:\n    image: nginx\n    ports:\n      - "${API_KEY}"\n', {
    secretValues: async () => ({ values: { API_KEY: SECRET } }),
  });
  const secrets = deploySecrets({ service: s.service, log: s.log }, s.context, 'values');
  let caught: unknown;
  try {
    await loadComposeWithSecrets({ cwd: s.dir, env: {} }, secrets.stored);
  } catch (err) {
    caught = secrets.scrub(err);
  }
  assert.ok(caught instanceof Error, 'the bad port is an error');
  assert.ok(!caught.message.includes(SECRET), `error text holds the value: ${caught.message}`);
  assert.ok(!(caught.stack ?? '').includes(SECRET));
  assert.match(caught.message, /\*\*\*/, 'the value is replaced, not the whole message');
  // Whatever code writes the value to the log later (a debug dump of an applied object), the file never holds it.
  s.log.error(`deploy failed: ${caught.message}`);
  s.log.debug('applying', { env: [{ name: 'API_KEY', value: SECRET }] });
  s.log.close();
  const file = readFileSync(s.logFile, 'utf8');
  assert.ok(file.includes('applying'), 'the line was written');
  assert.ok(!file.includes(SECRET), 'devtool.log holds the stored value');
  assert.ok(!file.includes(Buffer.from(SECRET).toString('base64')), 'devtool.log holds the value base64-encoded');
  assert.deepEqual(s.calls, ['https://svc.example dvt_test']);
});

test('an unreachable service: one line naming the variables, no empty value', async () => {
  const s = setup('services:\n  web:\n    image: nginx\n    environment:\n      A: ${API_KEY}\n      B: ${DB_PASSWORD}\n', {
    secretValues: async () => {
      throw new DevtoolError('cannot reach the devtool service at https://svc.example: nothing listens there (ECONNREFUSED)');
    },
  });
  const secrets = deploySecrets({ service: s.service, log: s.log }, s.context, 'values');
  await assert.rejects(loadComposeWithSecrets({ cwd: s.dir, env: {} }, secrets.stored), (err: Error) => {
    assert.equal(
      err.message,
      '${API_KEY}, ${DB_PASSWORD} are set by neither the shell nor .env, and the stored secrets cannot be read: ' +
        'cannot reach the devtool service at https://svc.example: nothing listens there (ECONNREFUSED)',
    );
    return true;
  });
});

test('a dry run shows placeholders and never asks for the values', async () => {
  const s = setup('services:\n  web:\n    image: nginx\n    environment:\n      A: ${API_KEY}\n', {
    listSecrets: async () => ({ secrets: [{ name: 'API_KEY' }] }),
    secretValues: async () => assert.fail('a dry run read the values'),
  });
  const secrets = deploySecrets({ service: s.service, log: s.log }, s.context, 'placeholders');
  const p = await loadComposeWithSecrets({ cwd: s.dir, env: {} }, secrets.stored);
  assert.equal(p.services[0]!.environment.get('A'), '<stored secret API_KEY>');
});

test('a plain cluster context, or a service context without a token, has no stored secrets', () => {
  const s = setup('services: {}\n', {});
  assert.equal(deploySecrets({ service: s.service, log: s.log }, { ...s.context, isDevtool: false }, 'values').stored, undefined);
  const { token: _t, ...noToken } = s.context;
  assert.equal(deploySecrets({ service: s.service, log: s.log }, noToken as ResolvedContext, 'values').stored, undefined);
  assert.equal(deploySecrets({ service: s.service, log: s.log }, undefined, 'values').stored, undefined);
});

test('progress lines (the terminal and the transcript recorded in the cluster) never show a stored value once read', async () => {
  const s = setup('services:\n  web:\n    image: nginx\n    environment:\n      A: ${API_KEY}\n', {
    secretValues: async () => ({ values: { API_KEY: SECRET } }),
  });
  const secrets = deploySecrets({ service: s.service, log: s.log }, s.context, 'values');
  let terminal = '';
  const progress = new Progress({ write: (t: string) => (terminal += t) }, () => new Date(), s.log, secrets.scrubText);
  await loadComposeWithSecrets({ cwd: s.dir, env: {} }, secrets.stored);
  // A container's failure event quoting its command line, as Kubernetes reports it.
  progress.warn(`web: exec: "${SECRET}": executable file not found`);
  progress.child('dep').detail(`log tail: token=${SECRET}`);
  assert.ok(terminal.includes('executable file not found'));
  assert.ok(!terminal.includes(SECRET), terminal);
  assert.ok(!progress.transcript().includes(SECRET));
});
