/**
 * Property test: thousands of mutated Compose files (the fixtures, mutated as text and as trees)
 * through load + translate. Each must end in well-formed objects or a one-line LocatedError:
 * never another exception, never a hang. The cases run in a worker thread so a watchdog can stop
 * a case that hangs (a synchronous loop cannot be interrupted otherwise) and report its input.
 *
 * FUZZ_SEED and FUZZ_RUNS change the seed and the number of cases (default: fixed, so CI is
 * reproducible; try other seeds locally).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Worker } from 'node:worker_threads';
import type { FuzzMessage, FuzzRequest } from './fuzz.worker.ts';

// A hang never ends; a slow case on a loaded machine (a garbage collection, the worker's first
// case, which includes loading tsx and compiling the sources) once took over 2 s. 10 s tells them apart.
const perCaseLimitMs = 10_000;
const runs = Number(process.env['FUZZ_RUNS'] ?? 2500);
const request: FuzzRequest = { seed: Number(process.env['FUZZ_SEED'] ?? 20240604), textRuns: runs, treeRuns: runs };

test(`mutated Compose files give objects or located errors (${runs * 2} cases, seed ${request.seed})`, { timeout: 120_000 }, async () => {
  // Workers do not inherit the tsx loader on Node 20: the worker registers it, then loads the .ts.
  const entry = new URL('./fuzz.worker.ts', import.meta.url).href;
  const bootstrap = `import('tsx/esm/api').then(({ register }) => { register(); return import(${JSON.stringify(entry)}); })`;
  const worker = new Worker(bootstrap, { eval: true, workerData: request });
  let lastCase = '';
  let lastProgress = Date.now();
  let cases = 0;
  const outcome = await new Promise<FuzzMessage | { type: 'hang' } | { type: 'crash'; error: string }>((resolve) => {
    const watchdog = setInterval(() => {
      if (Date.now() - lastProgress > perCaseLimitMs) {
        clearInterval(watchdog);
        void worker.terminate();
        resolve({ type: 'hang' });
      }
    }, 200);
    worker.on('message', (m: FuzzMessage) => {
      lastProgress = Date.now();
      if (m.type === 'case') {
        lastCase = m.text;
        cases++;
        return;
      }
      clearInterval(watchdog);
      void worker.terminate();
      resolve(m);
    });
    worker.on('error', (err) => {
      clearInterval(watchdog);
      resolve({ type: 'crash', error: err.stack ?? String(err) });
    });
  });
  if (outcome.type === 'hang') assert.fail(`a case ran longer than ${perCaseLimitMs} ms; its input:\n${lastCase}`);
  if (outcome.type === 'crash') assert.fail(`the worker crashed on:\n${lastCase}\n${outcome.error}`);
  if (outcome.type === 'failed') assert.fail(`${outcome.error}\nlast input:\n${lastCase}`);
  assert.equal(outcome.type, 'done');
  if (outcome.type === 'done') {
    // Tree cases whose seed is not valid YAML are skipped; every text case runs.
    assert.ok(cases > runs * 1.9, `only ${cases} cases ran`);
    console.log(`fuzz: ${cases} cases, ${outcome.stats['objects']} gave objects, ${outcome.stats['located']} located errors`);
    // Both outcomes must be exercised, or the mutations are too weak (or too strong) to test anything.
    assert.ok(outcome.stats['objects']! > runs / 10, `only ${outcome.stats['objects']} cases produced objects`);
    assert.ok(outcome.stats['located']! > runs / 10, `only ${outcome.stats['located']} cases produced errors`);
  }
});
