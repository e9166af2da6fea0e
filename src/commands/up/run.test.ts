import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { ExitCode } from '../../base/errors.ts';
import { commandSandbox, failure, runCommand } from '../../../test/command-harness.ts';
import { inProcessService, logIn } from '../../../test/in-process-service.ts';

// What `up` does on a cluster runs end to end (test/e2e/dev-*.e2e.test.ts); here, what it refuses
// before it reads a file or asks a cluster (the test gives no cluster: asking for one would fail).

test('a bad --env is a usage error naming the flag, before any manifest is read', async () => {
  const r = await runCommand(['up', '--env', 'NOEQUALS']);
  assert.equal(failure(r, ExitCode.usage), `Error: invalid value "..." for flag --env: expected KEY=VALUE, found no "="; run 'devtool up --help' for usage`);
  assert.equal(r.stdout, '');
});

test('flags and arguments: an unknown flag, a command after --', async () => {
  assert.match(
    failure(await runCommand(['up', '--namspace', 'dev']), ExitCode.usage),
    /unknown flag --namspace for 'devtool up' \(did you mean "--namespace"\?\)/,
  );
  assert.match(failure(await runCommand(['up', '--', 'ls']), ExitCode.usage), /takes no command after '--'/);
});

test('the dev container must be one of the manifest, which must exist', async () => {
  const sandbox = commandSandbox();
  assert.match(
    failure(await runCommand(['up'], { sandbox }), ExitCode.failure),
    /^Error: no manifest devtool\.yml in .*project: create one with a services entry for your dev container, e\.g\. /,
  );
  writeFileSync(join(sandbox.project, 'devtool.yml'), 'services:\n  api:\n    sync: [".:/app"]\n');
  assert.equal(
    failure(await runCommand(['up', 'web'], { sandbox }), ExitCode.usage),
    'Error: devtool.yml has no services entry "web" (it has api); add services.web or pick one of those',
  );
  assert.match(
    failure(await runCommand(['up', '--context', 'gamma'], { sandbox }), ExitCode.usage),
    /--context: unknown context "gamma" \(known: alpha, beta\)/,
  );
});

test('on a service context, a sleeping namespace is refused in one line before any cluster is asked', async () => {
  const service = await inProcessService();
  try {
    const sandbox = commandSandbox();
    await logIn(sandbox, service, service.alice);
    writeFileSync(join(sandbox.project, 'devtool.yml'), 'services:\n  api:\n    sync: [".:/app"]\n');
    await service.store.setNamespaceMarks('alice-devtool', { sleepingSince: '2026-05-01T10:00:00.000Z', sleptBy: 'idle' });
    const r = await runCommand(['up', 'api'], { sandbox, service: service.client });
    assert.equal(
      failure(r, ExitCode.failure),
      "Error: namespace alice-devtool is asleep (since 2026-05-01T10:00:00.000Z, put to sleep by idle): wake it with 'devtool namespace wake alice-devtool'",
    );
    assert.equal(r.stdout, '');
  } finally {
    await service.close();
  }
});
