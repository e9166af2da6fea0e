/**
 * devtool.log never holds what a user passes as a secret: `--var` values (all of them on the
 * command line, `--var MODE=***` too), a value repeated by an error message, a secret-named
 * variable of the environment (GITHUB_TOKEN) whichever line would repeat it. The names stay, so
 * the log still says what was run. No cluster needed: `deploy --dry-run` of a Compose file.
 */
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { ExitCode } from '../../src/base/errors.ts';
import { createSandbox, runDevtool } from './cli.ts';

const PASSWORD = 's3cr3t-value';

function project() {
  const sb = createSandbox();
  const folder = join(sb.root, 'shop');
  mkdirSync(folder);
  writeFileSync(
    join(folder, 'docker-compose.yml'),
    'services:\n  api:\n    image: nginx:1\n    environment:\n      DB_PASSWORD: ${DB_PASSWORD}\n      MODE: ${MODE}\n',
  );
  const log = () => readFileSync(join(sb.devtoolHome, 'devtool.log'), 'utf8');
  return { sb, folder, log };
}

test('deploy --var values are not in devtool.log; their names are', () => {
  const { sb, folder, log } = project();
  const r = runDevtool(['deploy', '--dry-run', '--var', `DB_PASSWORD=${PASSWORD}`, `--var=MODE=local-mode`], { env: sb.env, cwd: folder });
  assert.equal(r.code, ExitCode.ok, r.stderr);
  // The variables did reach the deploy: the dry run's objects hold them.
  assert.match(r.stdout, new RegExp(`value: ${PASSWORD}`));
  assert.ok(!log().includes(PASSWORD), log());
  assert.ok(!log().includes('local-mode'), log());
  assert.match(log(), /DEBUG devtool [^:]+: deploy --dry-run --var DB_PASSWORD=\*\*\* --var=MODE=\*\*\*$/m);
});

test('a rejected --var is not repeated in devtool.log by its error', () => {
  const { sb, folder, log } = project();
  const r = runDevtool(['deploy', '--dry-run', '--var', `DB-PASSWORD=${PASSWORD}`, '--var', PASSWORD], { env: sb.env, cwd: folder });
  assert.equal(r.code, ExitCode.usage, r.stderr);
  assert.match(r.stderr, /invalid value "DB-PASSWORD=\.\.\." for flag --var/);
  assert.match(log(), /error: UsageError: invalid value/);
  assert.ok(!log().includes(PASSWORD), log());
});

test('a secret-named variable of the environment is hidden in every line of devtool.log', () => {
  const { sb, folder, log } = project();
  const token = 'env-token-1234';
  // A line that repeats it: here the command line itself, through an option not marked sensitive.
  const r = runDevtool(['deploy', '--dry-run', '--name', `shop-${token}`], { env: { ...sb.env, GITHUB_TOKEN: token }, cwd: folder });
  assert.equal(r.code, ExitCode.ok, r.stderr);
  assert.ok(!log().includes(token), log());
  assert.match(log(), /--name shop-\*\*\*$/m);
});

test("the shell's PWD is a folder, not a secret: devtool.log names the project's files; MYSQL_PWD stays hidden", () => {
  const { sb, folder, log } = project();
  const file = join(folder, 'docker-compose.yml');
  const r = runDevtool(['deploy', '--dry-run', '--namespace', 'shop', '-f', file, '--name', 'pw-hunter2'], {
    env: { ...sb.env, PWD: folder, MYSQL_PWD: 'hunter2' },
    cwd: folder,
  });
  assert.equal(r.code, ExitCode.ok, r.stderr);
  assert.ok(log().includes(`-f ${file} `), log());
  assert.ok(!log().includes('hunter2'), log());
});
