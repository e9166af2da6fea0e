import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ed25519KeyPair } from '../dev/keys.ts';
import { isSecretName, redactEnvironment, Redactor, REDACTED, secretValuesIn } from './redact.ts';

test('secret names are recognized part by part', () => {
  for (const n of ['PASSWORD', 'DB_PASSWORD', 'API_TOKEN', 'apiKey', 'guiPassword', 'X-API-Key', 'AWS_SECRET_ACCESS_KEY', 'SYNCTHING_APIKEY', 'githubToken', 'client-key-data', 'Authorization', 'SESSION_SECRET', 'db.pass', 'privateKey', 'hostKey', 'key']) {
    assert.ok(isSecretName(n), n);
  }
  for (const n of ['author', 'AUTHOR_NAME', 'tokenizer', 'MONKEY', 'KEYBOARD_LAYOUT', 'passthrough', 'publicKey', 'clientPublicKey', 'TOKEN_FILE', 'keyPath', 'PATH', 'HOME', 'deviceID', 'certificate', 'tokenCount', 'NODE_ENV']) {
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
  assert.equal(r.text('{"name":"DB_PASSWORD","value":"s3cret"},{"name":"MODE","value":"dev"}'), `{"name":"DB_PASSWORD","value":"${REDACTED}"},{"name":"MODE","value":"dev"}`);
  assert.equal(r.text('{Name:API_TOKEN Value:abcdef ValueFrom:nil}'), `{Name:API_TOKEN Value:${REDACTED} ValueFrom:nil}`);
  assert.equal(r.text('- name: SECRET_KEY\n  value: xyz123\n- name: PORT\n  value: "8080"'), `- name: SECRET_KEY\n  value: ${REDACTED}\n- name: PORT\n  value: "8080"`);
});

test('bearer tokens, JWTs, passwords in URLs, XML elements', () => {
  const r = new Redactor();
  assert.equal(r.text('Authorization: Bearer abcdefghijklmnop'), `Authorization: Bearer ${REDACTED}`);
  const jwt = 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ1c2VyIn0.c2lnbmF0dXJl';
  assert.equal(r.text(`token was ${jwt} ok`), `token was ${REDACTED} ok`);
  assert.equal(r.text('dial postgres://app:pa55word@db:5432/app failed'), `dial postgres://app:${REDACTED}@db:5432/app failed`);
  assert.equal(r.text('<gui><user>devtool</user><password>pw123456</password><apikey>ak-987654</apikey></gui>'), `<gui><user>devtool</user><password>${REDACTED}</password><apikey>${REDACTED}</apikey></gui>`);
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
  const contract = { version: 1, ssh: { hostKey: 'HOSTKEY', authorizedKeys: ['ssh-ed25519 AAA'] }, syncthing: { apiKey: 'API', guiPassword: 'PW', certificate: 'CERT', key: 'STKEY', peer: { deviceID: 'ID' } } };
  assert.deepEqual(secretValuesIn(contract).sort(), ['API', 'HOSTKEY', 'PW', 'STKEY', 'ssh-ed25519 AAA'].sort());
  assert.deepEqual(secretValuesIn({ user: { token: 't', 'client-certificate-data': 'c', 'client-key-data': 'k' } }).sort(), ['k', 't']);
});

test('redactEnvironment hides the values of secret-named variables only', () => {
  assert.deepEqual(redactEnvironment({ API_TOKEN: 'x', DB_PASSWORD: 'y', MODE: 'dev', EMPTY_SECRET: '' }), { API_TOKEN: REDACTED, DB_PASSWORD: REDACTED, MODE: 'dev', EMPTY_SECRET: '' });
});
