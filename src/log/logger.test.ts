import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { Logger, type LoggerOptions } from './logger.ts';

const root = mkdtempSync(join(tmpdir(), 'devtool-logger-test-'));
after(() => rmSync(root, { recursive: true, force: true }));

let n = 0;
function setup(opts: Partial<LoggerOptions> = {}) {
  const dir = join(root, `case${n++}`, 'home');
  const file = join(dir, 'devtool.log');
  let terminal = '';
  const sink = new Writable({
    write(chunk, _enc, done) {
      terminal += String(chunk);
      done();
    },
  });
  const log = new Logger({ file, terminal: sink, level: 'warn', now: () => new Date('2030-01-02T03:04:05.000Z'), ...opts });
  return { log, file, dir, terminal: () => terminal };
}

test('the terminal gets only messages at or above the level; the file gets everything', () => {
  const { log, file, terminal } = setup();
  log.debug('d1');
  log.info('i1');
  log.warn('w1');
  log.error('e1', { code: 7 });
  log.fileOnly('f1');
  log.close();
  assert.equal(terminal(), 'warn: w1\nerror: e1 { code: 7 }\n');
  assert.equal(
    readFileSync(file, 'utf8'),
    [
      '2030-01-02T03:04:05.000Z DEBUG d1',
      '2030-01-02T03:04:05.000Z INFO  i1',
      '2030-01-02T03:04:05.000Z WARN  w1',
      '2030-01-02T03:04:05.000Z ERROR e1 { code: 7 }',
      '2030-01-02T03:04:05.000Z DEBUG f1',
      '',
    ].join('\n'),
  );
  assert.equal(statSync(file).mode & 0o777, 0o600);
});

test('each level shows what it should on the terminal', () => {
  const expected: Record<string, string> = {
    debug: 'debug: d\ni\nwarn: w\nerror: e\n',
    info: 'i\nwarn: w\nerror: e\n',
    warn: 'warn: w\nerror: e\n',
    error: 'error: e\n',
  };
  for (const level of ['debug', 'info', 'warn', 'error'] as const) {
    const { log, file, terminal } = setup({ level });
    log.debug('d');
    log.info('i');
    log.warn('w');
    log.error('e');
    log.close();
    assert.equal(terminal(), expected[level], level);
    assert.equal(readFileSync(file, 'utf8').split('\n').filter(Boolean).length, 4, `${level}: the file has all four`);
  }
  const { log, terminal } = setup({ level: 'error' });
  log.setLevel('debug');
  log.debug('now visible');
  log.close();
  assert.equal(terminal(), 'debug: now visible\n');
});

test('the log file is appended to across loggers', () => {
  const { log, file, dir } = setup();
  log.warn('first');
  log.close();
  const again = new Logger({ file, terminal: new Writable({ write: (_c, _e, d) => d() }), level: 'warn', now: () => new Date(0) });
  again.warn('second');
  again.close();
  const lines = readFileSync(file, 'utf8').trim().split('\n');
  assert.equal(lines.length, 2);
  assert.match(lines[1]!, /WARN {2}second$/);
  assert.deepEqual(readdirSync(dir), ['devtool.log']);
});

test('rotation at maxBytes keeps `keep` old files, also within one long-running logger', () => {
  const { log, file, dir } = setup({ maxBytes: 1000, keep: 2 });
  const line = 'x'.repeat(60);
  for (let i = 0; i < 200; i++) log.debug(`${i} ${line}`);
  log.close();
  assert.deepEqual(readdirSync(dir).sort(), ['devtool.log', 'devtool.log.1', 'devtool.log.2']);
  for (const f of ['devtool.log', 'devtool.log.1', 'devtool.log.2']) {
    const size = statSync(join(dir, f)).size;
    assert.ok(size < 1000 + 120, `${f} is ${size} bytes`);
  }
  // The newest line is in devtool.log, the one before the rotation in devtool.log.1.
  assert.match(readFileSync(file, 'utf8'), /DEBUG 199 x+\n$/);
  const current = readFileSync(file, 'utf8').split('\n').filter(Boolean);
  const firstOfCurrent = Number(/DEBUG (\d+)/.exec(current[0]!)![1]);
  assert.match(readFileSync(`${file}.1`, 'utf8'), new RegExp(`DEBUG ${firstOfCurrent - 1} x+\\n$`));
});

test('a file already past maxBytes is rotated when a new logger opens it', () => {
  const { log, file, dir } = setup({ maxBytes: 100, keep: 3 });
  mkdirSync(dir, { recursive: true });
  writeFileSync(file, 'old\n'.repeat(50));
  writeFileSync(`${file}.1`, 'older\n');
  log.warn('fresh');
  log.close();
  assert.deepEqual(readdirSync(dir).sort(), ['devtool.log', 'devtool.log.1', 'devtool.log.2']);
  assert.match(readFileSync(file, 'utf8'), /^\S+ WARN {2}fresh\n$/);
  assert.equal(readFileSync(`${file}.1`, 'utf8'), 'old\n'.repeat(50));
  assert.equal(readFileSync(`${file}.2`, 'utf8'), 'older\n');
});

test('an unwritable log file never breaks the command', () => {
  const blocker = join(root, `blocker${n++}`);
  writeFileSync(blocker, '');
  let terminal = '';
  const log = new Logger({
    file: join(blocker, 'devtool.log'),
    terminal: new Writable({
      write(c, _e, d) {
        terminal += String(c);
        d();
      },
    }),
    level: 'warn',
    now: () => new Date(0),
  });
  assert.doesNotThrow(() => log.warn('still shown'));
  assert.doesNotThrow(() => log.fileOnly('dropped'));
  log.close();
  assert.equal(terminal, 'warn: still shown\n');
  assert.equal(existsSync(join(blocker, 'devtool.log')), false);
});

test("hidden values never reach the file, whichever line repeats them; the terminal is the user's own", () => {
  const { log, file, terminal } = setup({ hidden: ['env-token-value'] });
  log.hide(['s3cr3t-value', 'short']);
  log.fileOnly(`error: cannot connect with env-token-value: ${new Error('password s3cr3t-value rejected').stack}`);
  log.warn('retrying with s3cr3t-value');
  log.debug('a short word stays: short');
  log.close();
  const text = readFileSync(file, 'utf8');
  assert.ok(!text.includes('s3cr3t-value') && !text.includes('env-token-value'), text);
  assert.match(text, /cannot connect with \*\*\*: Error: password \*\*\* rejected/);
  assert.match(text, /retrying with \*\*\*/);
  assert.match(text, /a short word stays: short/);
  assert.equal(terminal(), 'warn: retrying with s3cr3t-value\n');
});
