import assert from 'node:assert/strict';
import { test } from 'node:test';
import { commandLineForLog } from './command-line.ts';
import type { OptionSpec } from './spec.ts';

const options: OptionSpec[] = [
  { name: 'var', type: 'list', sensitive: 'assignments', description: '' },
  { name: 'env', short: 'e', type: 'list', sensitive: 'assignments', description: '' },
  { name: 'token', type: 'string', sensitive: 'value', description: '' },
  { name: 'namespace', short: 'n', type: 'string', description: '' },
  { name: 'name', type: 'string', description: '' },
  { name: 'wait', type: 'bool', description: '' },
];

const logged = (argv: string[]) => commandLineForLog(argv, options);

test('sensitive options: whole values, or the values of KEY=VALUE, in every spelling', () => {
  assert.equal(
    logged(['deploy', '--var', 'DB_PASSWORD=s3cr3t', '--var=MODE=local', '--wait', '-n', 'ns1']).text,
    'deploy --var DB_PASSWORD=*** --var=MODE=*** --wait -n ns1',
  );
  assert.equal(logged(['up', '-e', 'API_KEY=k', '-eB=2', '--env', 'C=3']).text, 'up -e API_KEY=*** -eB=*** --env C=***');
  assert.equal(logged(['context', 'use', 'x.example', '--token', 't0k']).text, 'context use x.example --token ***');
  assert.equal(logged(['context', 'use', 'x.example', '--token=t0k']).text, 'context use x.example --token=***');
  // Not KEY=VALUE: the whole value.
  assert.equal(logged(['deploy', '--var', 's3cr3t']).text, 'deploy --var ***');
  // Other options and arguments are kept as typed.
  assert.equal(logged(['deploy', '--name', 'shop', 'api']).text, 'deploy --name shop api');
});

test('the command after --: KEY=VALUE words, assignments inside words, the value of a secret-named flag', () => {
  assert.equal(logged(['exec', '--', 'env', 'TOKEN=abc', 'MODE=dev', 'printenv']).text, 'exec -- env TOKEN=*** MODE=*** printenv');
  assert.equal(logged(['exec', '--', 'sh', '-c', 'API_KEY="a b" run && export X=1']).text, 'exec -- sh -c API_KEY=*** run && export X=***');
  assert.equal(logged(['exec', '--', 'mysql', '--password', 'pw', '--user', 'bob', '-p', 'x']).text, 'exec -- mysql --password *** --user bob -p x');
  // Flags and URLs in the command are not assignments.
  assert.equal(logged(['exec', '--', 'npm', 'test', '--', '--grep=foo', 'http://x/?a=1']).text, 'exec -- npm test -- --grep=foo http://x/?a=1');
  // --var after -- belongs to the command, not to devtool.
  assert.equal(logged(['exec', '--', 'tool', '--var', 'plain']).text, 'exec -- tool --var plain');
});

test('the patterns of redact.ts apply to the rest: a password in a URL, a bearer token', () => {
  assert.equal(
    logged(['pipeline', 'deploy', '--name', 'https://bob:pa55@git.example/x.git']).text,
    'pipeline deploy --name https://bob:REDACTED@git.example/x.git',
  );
  assert.equal(logged(['exec', '--', 'curl', '-H', 'Authorization: Bearer abc.def-123']).text, 'exec -- curl -H Authorization: Bearer REDACTED');
});

test('the secret-looking values are returned for the logger to hide in later lines; others are not', () => {
  const { secrets } = logged([
    'deploy',
    '--var',
    'DB_PASSWORD=s3cr3t',
    '--var',
    'MODE=local',
    '--token',
    'tok',
    '--',
    'env',
    'GH_TOKEN="x y"',
    'A=b',
    'x',
    '--api-key',
    'k3y',
  ]);
  assert.deepEqual(secrets.sort(), ['k3y', 's3cr3t', 'tok', 'x y'].sort());
});
