import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';

const script = fileURLToPath(new URL('chart-values.mjs', import.meta.url));
const chartValues = fileURLToPath(new URL('../../chart/values.yaml', import.meta.url));

function withValues(fn: (file: string) => void) {
  const dir = mkdtempSync(join(tmpdir(), 'chart-values-'));
  try {
    const file = join(dir, 'values.yaml');
    copyFileSync(chartValues, file);
    fn(file);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const setValues = (file: string, ...settings: string[]) => spawnSync(process.execPath, [script, file, ...settings], { encoding: 'utf8' });

test("sets the chart's image values; every other line, comments included, stays as it was", () => {
  withValues((file) => {
    const ref = `ghcr.io/devtool-dev/devtool-service:0.1.0@sha256:${'a'.repeat(64)}`;
    const r = setValues(file, `service.image=${ref}`, 'pipelines.runnerImage=r:1');
    assert.equal(r.status, 0, r.stderr);
    const after = readFileSync(file, 'utf8');
    const values = parse(after) as { service: { image: string; replicas: number }; pipelines: { runnerImage: string } };
    assert.equal(values.service.image, ref);
    assert.equal(values.service.replicas, 2);
    assert.equal(values.pipelines.runnerImage, 'r:1');
    const before = readFileSync(chartValues, 'utf8').split('\n');
    const changed = after.split('\n').filter((line, i) => line !== before[i]);
    // The values keep their quotes: an empty "" becomes a quoted reference.
    assert.deepEqual(changed, [`  image: "${ref}"`, '  runnerImage: "r:1"']);
  });
});

test('a value the chart does not have is refused in one line, and nothing is written', () => {
  withValues((file) => {
    const r = setValues(file, 'service.imag=x');
    assert.equal(r.status, 1);
    assert.equal(r.stderr, `chart-values: ${file} has no value service.imag\n`);
    assert.equal(readFileSync(file, 'utf8'), readFileSync(chartValues, 'utf8'));
  });
});
