import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync, mkdirSync } from 'node:fs';
import { arch, platform, tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { DevtoolHome } from '../home.ts';
import { Logger } from '../log/logger.ts';
import { Analytics, correlationUUID, SPOOL_MAX_BYTES, type AnalyticsRecord } from './analytics.ts';

const root = mkdtempSync(join(tmpdir(), 'devtool-analytics-test-'));
after(() => rmSync(root, { recursive: true, force: true }));

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const NOW = new Date('2030-01-02T03:04:05.000Z');

let n = 0;
function newHome(): DevtoolHome {
  return new DevtoolHome(join(root, `home${n++}`));
}

function analytics(home: DevtoolHome, env: NodeJS.ProcessEnv = {}): Analytics {
  const log = new Logger({ file: home.logFile, terminal: new PassThrough(), level: 'warn', now: () => NOW });
  return new Analytics(home, env, '9.8.7', () => NOW, log);
}

function spool(home: DevtoolHome): AnalyticsRecord[] {
  if (!existsSync(home.analyticsSpool)) return [];
  return readFileSync(home.analyticsSpool, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as AnalyticsRecord);
}

test('a record has exactly the documented fields', () => {
  const home = newHome();
  const a = analytics(home);
  a.track('context use', true);
  a.track('deploy', false, 'user-42');
  const [first, second] = spool(home);
  assert.deepEqual(Object.keys(first!).sort(), ['action', 'actionId', 'machineId', 'os', 'success', 'timestamp', 'version']);
  assert.equal(first!.action, 'context use');
  assert.equal(first!.timestamp, '2030-01-02T03:04:05.000Z');
  assert.equal(first!.version, '9.8.7');
  assert.equal(first!.os, `${platform()}/${arch()}`);
  assert.match(first!.machineId, UUID);
  assert.match(first!.actionId, UUID);
  assert.equal(first!.success, true);
  assert.deepEqual(Object.keys(second!).sort(), ['action', 'actionId', 'machineId', 'os', 'success', 'timestamp', 'userId', 'version']);
  assert.equal(second!.userId, 'user-42');
  assert.equal(second!.success, false);
  // Both actions of one execution share the action ID.
  assert.equal(second!.actionId, first!.actionId);
  assert.deepEqual(a.spooled(), [first, second]);
  assert.equal(statSync(home.analyticsSpool).mode & 0o777, 0o600);
});

test('each execution has its own action ID; the machine ID is created once and kept', () => {
  const home = newHome();
  const a = analytics(home);
  a.track('version', true);
  const settings = JSON.parse(readFileSync(home.analyticsFile, 'utf8'));
  assert.deepEqual(Object.keys(settings).sort(), ['enabled', 'machineId']);
  assert.equal(settings.enabled, true);
  assert.match(settings.machineId, UUID);
  assert.equal(statSync(home.analyticsFile).mode & 0o777, 0o600);

  const b = analytics(home);
  b.track('version', true);
  const [r1, r2] = spool(home);
  assert.equal(r1!.machineId, settings.machineId);
  assert.equal(r2!.machineId, settings.machineId);
  assert.notEqual(r1!.actionId, r2!.actionId);
  assert.equal(JSON.parse(readFileSync(home.analyticsFile, 'utf8')).machineId, settings.machineId);

  // Another home is another machine.
  const other = newHome();
  analytics(other).track('version', true);
  assert.notEqual(spool(other)[0]!.machineId, settings.machineId);
});

test('setEnabled(false) persists and stops records; setEnabled(true) resumes them', () => {
  const home = newHome();
  analytics(home).track('version', true);
  const machineId = spool(home)[0]!.machineId;

  const a = analytics(home);
  a.setEnabled(false);
  assert.equal(a.isEnabled(), false);
  a.track('after disable, same process', true);
  analytics(home).track('after disable, new process', true);
  assert.equal(analytics(home).isEnabled(), false);
  assert.deepEqual(
    spool(home).map((r) => r.action),
    ['version'],
  );
  assert.deepEqual(JSON.parse(readFileSync(home.analyticsFile, 'utf8')), { enabled: false, machineId });

  analytics(home).setEnabled(true);
  analytics(home).track('enabled again', true);
  assert.deepEqual(
    spool(home).map((r) => r.action),
    ['version', 'enabled again'],
  );
  assert.equal(spool(home)[1]!.machineId, machineId, 'the machine ID survives the opt-out');
});

test('DEVTOOL_DISABLE_ANALYTICS=1 stops records for that instance only', () => {
  const home = newHome();
  for (const value of ['1', 'true', 'YES']) {
    const off = analytics(home, { DEVTOOL_DISABLE_ANALYTICS: value });
    assert.equal(off.isEnabled(), false, value);
    off.track('disabled by env', true);
  }
  assert.equal(existsSync(home.analyticsSpool), false);
  assert.equal(existsSync(home.analyticsFile), false, 'nothing is persisted, not even a machine ID');

  const on = analytics(home, { DEVTOOL_DISABLE_ANALYTICS: '0' });
  assert.equal(on.isEnabled(), true);
  on.track('enabled', true);
  assert.deepEqual(
    spool(home).map((r) => r.action),
    ['enabled'],
  );
  assert.equal(JSON.parse(readFileSync(home.analyticsFile, 'utf8')).enabled, true);
});

test('the spool stays bounded', () => {
  const home = newHome();
  mkdirSync(home.root, { recursive: true });
  // Fill the spool past its limit with old records.
  const oldRecord = { action: 'old', timestamp: '2020-01-01T00:00:00.000Z', version: '0.0.1', os: 'x', machineId: 'm', actionId: 'a', success: true };
  const old = `${JSON.stringify(oldRecord)}\n`;
  writeFileSync(home.analyticsSpool, old.repeat(Math.ceil((SPOOL_MAX_BYTES * 1.5) / old.length)));
  assert.ok(statSync(home.analyticsSpool).size > SPOOL_MAX_BYTES);

  const a = analytics(home);
  a.track('new', true);
  const size = statSync(home.analyticsSpool).size;
  assert.ok(size <= SPOOL_MAX_BYTES, `spool is ${size} bytes`);
  const records = spool(home);
  assert.equal(records.at(-1)!.action, 'new', 'the newest record is kept');
  assert.ok(records.length > 1000, 'not everything was dropped');

  // Keep writing: the spool never grows much past the limit.
  const line = readFileSync(home.analyticsSpool, 'utf8').split('\n')[0]!;
  for (let i = 0; i < 50; i++) {
    appendFileSync(home.analyticsSpool, `${line}\n`.repeat(Math.ceil(SPOOL_MAX_BYTES / 10 / line.length)));
    a.track(`new ${i}`, true);
    assert.ok(statSync(home.analyticsSpool).size <= SPOOL_MAX_BYTES + 1000, `round ${i}: ${statSync(home.analyticsSpool).size} bytes`);
  }
  assert.equal(spool(home).at(-1)!.action, 'new 49');
});

test('tracking never throws, even when the home cannot be written', () => {
  const file = join(root, `not-a-dir${n++}`);
  writeFileSync(file, 'x');
  // The home path is a file: nothing can be created under it.
  const home = new DevtoolHome(join(file, 'home'));
  const log = new Logger({ file: join(root, `log${n++}`, 'devtool.log'), terminal: new PassThrough(), level: 'warn', now: () => NOW });
  const a = new Analytics(home, {}, '1.0.0', () => NOW, log);
  assert.doesNotThrow(() => a.track('version', true));
  log.close();
});

test('action IDs are version-4 UUIDs, unique per execution', () => {
  const ids = Array.from({ length: 2000 }, () => correlationUUID());
  for (const id of ids) assert.match(id, UUID);
  assert.equal(new Set(ids).size, ids.length);
  assert.notEqual(analytics(newHome()).actionId, analytics(newHome()).actionId);
});
