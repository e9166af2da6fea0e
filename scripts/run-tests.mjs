// Runs the test files of one kind with node's test runner (TypeScript through tsx):
//   unit: src/**/*.test.ts, ingress/**/*.test.ts (pure logic, fakes allowed, no cluster)
//   e2e:  **/*.e2e.test.ts (the built CLI as a process, and the local cluster)
// Node 20's --test takes no globs, so the files are found here.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';

const kind = process.argv[2];
const filter = process.argv[3];
if (kind !== 'unit' && kind !== 'e2e') {
  console.error('usage: node scripts/run-tests.mjs unit|e2e [path-substring]');
  process.exit(2);
}

function find(dir, out = []) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === 'node_modules' || entry.name === 'dist' || entry.name.startsWith('.')) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) find(path, out);
    else if (entry.name.endsWith('.test.ts')) out.push(path);
  }
  return out;
}

const files = ['src', 'ingress', 'server', 'test', 'cluster', 'bench']
  .flatMap((d) => {
    try {
      return find(d);
    } catch {
      return [];
    }
  })
  .filter((f) => (kind === 'e2e' ? f.endsWith('.e2e.test.ts') : !f.endsWith('.e2e.test.ts')))
  .filter((f) => !filter || f.includes(filter))
  .sort();

if (files.length === 0) {
  console.error(`no ${kind} test files found`);
  process.exit(1);
}
// e2e files run one at a time (they share the cluster's CPU); no single test may take more than
// 10 minutes, so a hang fails that test by name instead of eating CI's whole time budget.
const e2eFlags = ['--test-concurrency=1', '--test-timeout=600000'];
const args = ['--import', 'tsx', '--test', '--test-reporter=spec', ...(kind === 'e2e' ? e2eFlags : []), ...files];
const result = spawnSync(process.execPath, args, { stdio: 'inherit' });
process.exit(result.status ?? 1);
