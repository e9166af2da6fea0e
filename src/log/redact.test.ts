import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ed25519KeyPair } from '../dev/keys.ts';
import { isSecretName, redactEnvironment, Redactor, REDACTED, secretEnvironmentValues, secretValuesIn } from './redact.ts';

test('secret names are recognized part by part', () => {
  for (const n of [
    'PASSWORD',
    'DB_PASSWORD',
    'API_TOKEN',
    'apiKey',
    'guiPassword',
    'X-API-Key',
    'AWS_SECRET_ACCESS_KEY',
    'SYNCTHING_APIKEY',
    'githubToken',
    'client-key-data',
    'Authorization',
    'SESSION_SECRET',
    'db.pass',
    'privateKey',
    'hostKey',
    'key',
    'MYSQL_PWD',
    'dbPwd',
  ]) {
    assert.ok(isSecretName(n), n);
  }
  for (const n of [
    'author',
    'AUTHOR_NAME',
    'tokenizer',
    'MONKEY',
    'KEYBOARD_LAYOUT',
    'passthrough',
    'publicKey',
    'clientPublicKey',
    'TOKEN_FILE',
    'keyPath',
    'PATH',
    'HOME',
    'deviceID',
    'certificate',
    'tokenCount',
    'NODE_ENV',
    'PWD',
    'OLDPWD',
    'SSH_AUTH_SOCK',
  ]) {
    assert.ok(!isSecretName(n), n);
  }
});

test('assignments in log lines: env style, JSON, YAML, headers, logfmt, query strings, Go structs', () => {
  const r = new Redactor();
  const cases: [string, string][] = [
    ['starting with API_TOKEN=abc123xyz and MODE=dev', `starting with API_TOKEN=${REDACTED} and MODE=dev`],
    ['{"apiKey": "k3y-v4lue", "user": "devtool"}', `{"apiKey": "${REDACTED}", "user": "devtool"}`],
    ['{"guiPassword":"pw0rd","address":"127.0.0.1:8384"}', `{"guiPassword":"${REDACTED}","address":"127.0.0.1:8384"}`],
    ['password: hunter22', `password: ${REDACTED}`],
    ['X-API-Key: 0123456789abcdef', `X-API-Key: ${REDACTED}`],
    ['level=info db_password="a b c" user=bob', `level=info db_password="${REDACTED}" user=bob`],
    ['GET /rest/db?token=t0k3n&folder=x', `GET /rest/db?token=${REDACTED}&folder=x`],
    ['{User:bob Password:hunter2 Port:5432}', `{User:bob Password:${REDACTED} Port:5432}`],
    ["export GITHUB_TOKEN='ghp_abcdef'", `export GITHUB_TOKEN='${REDACTED}'`],
    ['password=', 'password='],
    ['"password": null', '"password": null'],
    ['author=jane tokenizer=bpe', 'author=jane tokenizer=bpe'],
  ];
  for (const [input, want] of cases) assert.equal(r.text(input), want, input);
});

test('Kubernetes env entries: name/value pairs whose name looks secret', () => {
  const r = new Redactor();
  assert.equal(
    r.text('{"name":"DB_PASSWORD","value":"s3cret"},{"name":"MODE","value":"dev"}'),
    `{"name":"DB_PASSWORD","value":"${REDACTED}"},{"name":"MODE","value":"dev"}`,
  );
  assert.equal(r.text('{Name:API_TOKEN Value:abcdef ValueFrom:nil}'), `{Name:API_TOKEN Value:${REDACTED} ValueFrom:nil}`);
  assert.equal(
    r.text('- name: SECRET_KEY\n  value: xyz123\n- name: PORT\n  value: "8080"'),
    `- name: SECRET_KEY\n  value: ${REDACTED}\n- name: PORT\n  value: "8080"`,
  );
});

test('bearer tokens, JWTs, passwords in URLs, XML elements', () => {
  const r = new Redactor();
  assert.equal(r.text('Authorization: Bearer abcdefghijklmnop'), `Authorization: Bearer ${REDACTED}`);
  const jwt = 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ1c2VyIn0.c2lnbmF0dXJl';
  assert.equal(r.text(`token was ${jwt} ok`), `token was ${REDACTED} ok`);
  assert.equal(r.text('dial postgres://app:pa55word@db:5432/app failed'), `dial postgres://app:${REDACTED}@db:5432/app failed`);
  assert.equal(
    r.text('<gui><user>devtool</user><password>pw123456</password><apikey>ak-987654</apikey></gui>'),
    `<gui><user>devtool</user><password>${REDACTED}</password><apikey>${REDACTED}</apikey></gui>`,
  );
  assert.equal(r.text('see https://example.com:8443/path'), 'see https://example.com:8443/path');
});

test('private keys: PEM blocks, JSON-escaped ones, cut-off ones', () => {
  const { privateKey } = ed25519KeyPair('t');
  const r = new Redactor();
  const block = r.text(`key follows\n${privateKey}\nafter`);
  assert.ok(!block.includes(privateKey.split('\n')[1]!), block);
  assert.match(block, /-----BEGIN OPENSSH PRIVATE KEY-----REDACTED-----END OPENSSH PRIVATE KEY-----\n+after$/);
  const json = r.text(JSON.stringify({ hostKey: privateKey }));
  assert.ok(!json.includes(privateKey.split('\n')[1]!), json);
  assert.match(r.text('-----BEGIN RSA PRIVATE KEY-----MIIEow... (truncated)'), /^-----BEGIN RSA PRIVATE KEY-----REDACTED$/);
});

test('known values are replaced wherever they appear, also JSON-escaped and base64-encoded', () => {
  const { privateKey } = ed25519KeyPair('t');
  const r = new Redactor(['Tr0ub4dor&3', privateKey, 'none']);
  assert.equal(r.text('the sync password Tr0ub4dor&3 was rejected'), `the sync password ${REDACTED} was rejected`);
  assert.equal(r.text(`data: ${Buffer.from('Tr0ub4dor&3').toString('base64')}`), `data: ${REDACTED}`);
  const escaped = JSON.stringify(privateKey).slice(1, -1);
  assert.ok(!r.text(`contract {"k":"${escaped}"}`).includes(escaped));
  // Too short to be worth it (AUTH_MODE=none): the word stays readable elsewhere.
  assert.equal(r.text('retries: none'), 'retries: none');
});

test('secretValuesIn collects strings under secret-looking keys, at any depth', () => {
  const agentConfig = {
    version: 1,
    ssh: { hostKey: 'HOSTKEY', authorizedKeys: ['ssh-ed25519 AAA'] },
    syncthing: { apiKey: 'API', guiPassword: 'PW', certificate: 'CERT', key: 'STKEY', peer: { deviceID: 'ID' } },
  };
  assert.deepEqual(secretValuesIn(agentConfig).sort(), ['API', 'HOSTKEY', 'PW', 'STKEY', 'ssh-ed25519 AAA'].sort());
  assert.deepEqual(secretValuesIn({ user: { token: 't', 'client-certificate-data': 'c', 'client-key-data': 'k' } }).sort(), ['k', 't']);
});

test('redactEnvironment hides the values of secret-named variables only', () => {
  assert.deepEqual(redactEnvironment({ API_TOKEN: 'x', DB_PASSWORD: 'y', MODE: 'dev', EMPTY_SECRET: '' }), {
    API_TOKEN: REDACTED,
    DB_PASSWORD: REDACTED,
    MODE: 'dev',
    EMPTY_SECRET: '',
  });
});

// Lines as devtool, Syncthing, the agent and common tools write them: nothing in them is secret.
const ORDINARY = [
  '2026-11-24T08:43:15.795Z INFO  progress: • synchronizing /tmp/project (first pass: local files are never changed)',
  '2026-11-24T08:43:16.699Z INFO  first sync of /tmp/project: kept the local version of 3 path(s)',
  '[ABCDE] 2026/11/24 08:43:14.123456 INFO: GUI and API listening on 127.0.0.1:8384',
  'INFO: Established secure connection to XYZ at 127.0.0.1:1234-127.0.0.1:22000/tcp-client/TLS1.3 (local "devtool-local")',
  'pushing localhost:5000/app:dev to the registry at localhost',
  'error: the token expired; log in again',
  'warn: token: expired, refreshing',
  'the token localcache was refused',
  'Unauthorized: Bearer authentication required',
  'basic authentication failed for user bob',
  'using token from kubeconfig user devtool-local-admin',
  'sync key: none set, generating one',
  'devtool-agent: 2026/11/24 08:43:14 ssh: started pid 14',
  'ssh: login from 127.0.0.1:58104 (SSH-2.0-ssh2js1.17.0, key SHA256:Jr4jkuJS2t5GoUyurl33BCGZm2XbmkJ/04sHWhVpOr0)',
  'author=jane tokenizer=bpe passthrough=yes',
  'see https://example.com:8443/path?page=2',
];

test('ordinary log text stays as it is: "local", "localhost", "token expired", prose after a colon', () => {
  const r = new Redactor(['Tr0ub4dor&3']);
  for (const line of ORDINARY) assert.equal(r.text(line), line);
});

test('secrets in the same kinds of lines are gone', () => {
  const r = new Redactor();
  const cases: [string, string][] = [
    // A key at the start of a line is a key (YAML, headers), prose or not.
    ['token: expired', `token: ${REDACTED}`],
    ['  secret: letmein', `  secret: ${REDACTED}`],
    // A credential-shaped value after an everyday word, or with no space (Go), is a secret.
    ['warn: sync key: 9f8e7d6c5b4a', `warn: sync key: ${REDACTED}`],
    ['{Key:abc User:bob}', `{Key:${REDACTED} User:bob}`],
    ['the token ab12cd34ef was refused', `the token ${REDACTED} was refused`],
    ['Authorization: Bearer abcdefghijklmnop', `Authorization: Bearer ${REDACTED}`],
    ['curl -H "Authorization: token 0123abcd"', `curl -H "Authorization: token ${REDACTED}"`],
    ['"authorization":"Basic dXNlcjpwYXNz"', `"authorization":"Basic ${REDACTED}"`],
    // After `=`, the value runs to a space: commas, brackets and semicolons are part of it.
    ['exec -- env TOKEN={abc} DB_PASSWORD=a,b MODE=dev', `exec -- env TOKEN=${REDACTED}} DB_PASSWORD=${REDACTED} MODE=dev`],
    ['export API_KEY=x;y; run', `export API_KEY=${REDACTED}; run`],
    ['(password=abc)', `(password=${REDACTED})`],
    ['GH_PAT=abcdef123', `GH_PAT=${REDACTED}`],
    ['password: local', `password: ${REDACTED}`],
  ];
  for (const [input, want] of cases) assert.equal(r.text(input), want, input);
});

test('tokens known by their shape, whatever they are called', () => {
  const r = new Redactor();
  for (const token of [
    `ghp_${'a1B2'.repeat(9)}`,
    `github_pat_${'A1b2_'.repeat(9)}`,
    'glpat-abcdEFGH1234ijklMNOP',
    'AKIAIOSFODNN7EXAMPLE',
    'xoxb-1234567890-abcdefghij',
    `AIza${'Sy0_-'.repeat(7)}`,
    `sk_live_${'4eC39HqLyjWDarjt'}`,
    `npm_${'a1B2c3D4e5'.repeat(3)}abcdef`,
    `sk-proj-${'Ab1-'.repeat(8)}`,
  ]) {
    assert.equal(r.text(`cloned with ${token} ok`), `cloned with ${REDACTED} ok`, token);
  }
});

test('values devtool.log already hid (***) are left for the reader to see they were never logged', () => {
  const r = new Redactor();
  assert.equal(r.text('devtool 0.1.0: deploy --var DB_PASSWORD=*** --token ***'), 'devtool 0.1.0: deploy --var DB_PASSWORD=*** --token ***');
});

test('secretEnvironmentValues: the values of secret-named variables that are set', () => {
  assert.deepEqual(secretEnvironmentValues({ DEVTOOL_TOKEN: 'tok', GITHUB_TOKEN: '', HOME: '/home/u', PATH: '/bin', AWS_SECRET_ACCESS_KEY: 'k' }).sort(), [
    'k',
    'tok',
  ]);
});
