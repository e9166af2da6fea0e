/**
 * Golden files: a test renders its output and compares it with a file in the repository. A
 * missing golden file is a failure like a different one; only UPDATE_GOLDEN=1 writes the files
 * (review the diff before committing it: they are the specification).
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';

/** UPDATE_GOLDEN=1: the golden tests write what they render instead of comparing it. */
export const updateGolden = process.env['UPDATE_GOLDEN'] === '1';

const repo = fileURLToPath(new URL('..', import.meta.url));

/** Asserts that `file` holds exactly `actual`; writes it instead under UPDATE_GOLDEN=1. */
export function assertGolden(file: string, actual: string): void {
  if (updateGolden) {
    writeFileSync(file, actual);
    return;
  }
  const name = relative(repo, file);
  assert.ok(existsSync(file), `the golden file ${name} is missing: UPDATE_GOLDEN=1 writes it (review it before committing it)`);
  assert.equal(actual, readFileSync(file, 'utf8'), `${name} differs (UPDATE_GOLDEN=1 rewrites it; review the diff)`);
}
