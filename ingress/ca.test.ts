import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { hasNameConstraints } from './ca.ts';

/** A CA as scripts/service-up.sh makes it, with the extra -addext arguments given. */
function makeCa(extra: string[]): string {
  const dir = mkdtempSync(join(tmpdir(), 'devtool-ca-'));
  try {
    const r = spawnSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:P-256',
        '-nodes',
        '-days',
        '1',
        '-subj',
        '/CN=t',
        '-addext',
        'basicConstraints=critical,CA:TRUE',
        ...extra,
        '-keyout',
        join(dir, 'ca.key'),
        '-out',
        join(dir, 'ca.crt'),
      ],
      { encoding: 'utf8' },
    );
    assert.equal(r.status, 0, r.stderr);
    return readFileSync(join(dir, 'ca.crt'), 'utf8');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test('a CA with a name constraint is told from one without', () => {
  assert.equal(hasNameConstraints(makeCa(['-addext', 'nameConstraints=critical,permitted;DNS:devtool.test'])), true);
  assert.equal(hasNameConstraints(makeCa([])), false);
});
