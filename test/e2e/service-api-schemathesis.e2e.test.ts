/**
 * The API document against the service: Schemathesis (scripts/schemathesis.sh) generates requests
 * from docs/api/openapi.json, valid and invalid, sends them to the service its chart installed
 * (installed-service.ts) as a user with an API token, and checks every answer against the
 * document: no server error, a status and body the document declares, valid requests taken and
 * invalid ones refused, undeclared methods refused with 405. A bounded number of examples per route
 * and a fixed seed keep it to a minute or two and the same requests every run.
 *
 * Not generated: the build tunnel (an Upgrade to a byte stream, not a JSON exchange), preview
 * deploys (each valid one makes a namespace and starts a pipeline Job on the shared cluster; their
 * schemas are checked by the unit tests of server/previews/), and device codes (each one counts
 * against this machine's address for 10 minutes, which would make the next test file's device
 * login wait; server/login.test.ts covers the route).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { repoRoot } from './cli.ts';
import { type InstalledService, installedService } from './installed-service.ts';

const run = randomBytes(3).toString('hex');
const user = `e2est${run}`;
const EXAMPLES_PER_ROUTE = 10;
const SEED = '20261201';
const NOT_GENERATED = ['buildTunnel', 'deployPreview', 'deviceCode'];
const TOKEN_GRANT = 'tokenGrant';

let svc: InstalledService;
let token: string;
/** Where Schemathesis runs: it keeps its example database in its working directory. */
let scratch: string;

describe('the API document: Schemathesis against the installed service', () => {
  before(async () => {
    svc = await installedService();
    token = await svc.createUser(user);
    scratch = mkdtempSync(join(tmpdir(), 'schemathesis-'));
  });

  after(async () => {
    await svc?.removeUsers();
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  });

  test('every generated request is answered as docs/api/openapi.json says', () => {
    const tool = spawnSync('bash', [join(repoRoot, 'scripts/schemathesis.sh'), 'path'], { encoding: 'utf8', timeout: 600_000 });
    assert.equal(tool.status, 0, tool.stderr);
    const schemathesis = (checks: string[], operations: string[]) => {
      const args = [
        'run',
        join(repoRoot, 'docs/api/openapi.json'),
        ...['--url', svc.url, '--tls-verify', svc.caFile, '--header', `Authorization: Bearer ${token}`],
        ...checks,
        ...['--max-examples', String(EXAMPLES_PER_ROUTE), '--seed', SEED, '--workers', '1', '--phases', 'examples,coverage,fuzzing'],
        ...operations,
      ];
      const started = Date.now();
      const st = spawnSync(tool.stdout.trim(), args, { cwd: scratch, encoding: 'utf8', timeout: 300_000, env: { ...process.env, NO_COLOR: '1' } });
      console.log(`schemathesis ${operations.join(' ')} took ${((Date.now() - started) / 1000).toFixed(1)} s`);
      assert.equal(st.status, 0, `schemathesis found failures (exit ${st.status}):\n${st.stdout.slice(-20_000)}\n${st.stderr}`);
    };
    schemathesis(
      ['--checks', 'all'],
      [...NOT_GENERATED, TOKEN_GRANT].flatMap((id) => ['--exclude-operation-id', id]),
    );
    // A code the service did not issue is valid by the schema and refused with 400 invalid_grant, as
    // RFC 6749 5.2 says (what 404 is to another route): every check but that valid data is taken.
    schemathesis(['--checks', 'all', '--exclude-checks', 'positive_data_acceptance'], ['--include-operation-id', TOKEN_GRANT]);
  });
});
