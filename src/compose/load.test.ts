import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DevtoolError } from '../base/errors.ts';
import { LocatedError } from '../yaml/errors.ts';
import { loadCompose, type LoadOptions } from './load.ts';
import type { ComposeProject } from './model.ts';
import { volumeSpecParts } from './normalize/volumes.ts';

/** Loads from an in-memory folder /p. */
function load(files: Record<string, string>, options: Partial<LoadOptions> = {}): ComposeProject {
  return loadCompose({
    cwd: '/p',
    env: {},
    fileAccess: { readFile: (path) => (Object.hasOwn(files, path.replace(/^\/p\//, '')) ? files[path.replace(/^\/p\//, '')] : undefined) },
    files: ['compose.yaml'],
    ...options,
  });
}

function error(files: Record<string, string>, options: Partial<LoadOptions> = {}): LocatedError {
  try {
    load(files, options);
  } catch (err) {
    if (err instanceof LocatedError) return err;
    throw err;
  }
  assert.fail('expected a located error');
}

test('several files merge as Docker Compose merges them', () => {
  const p = load(
    {
      'compose.yaml':
        'services:\n  web:\n    image: a\n    command: [x, y]\n    environment: [A=1, B=1]\n    ports: ["80"]\n' +
        '    volumes: ["data:/data", "/cache"]\n    depends_on: [db]\n  db: {image: pg}\nvolumes: {data: {}, other: {}}\n',
      'override.yaml':
        'services:\n  web:\n    command: [z]\n    environment: {B: 2, C: 3}\n    ports: ["80", "81"]\n    volumes: ["other:/data"]\n' +
        '    depends_on: {cache: {condition: service_started}}\n  cache: {image: redis}\n',
    },
    { files: ['compose.yaml', 'override.yaml'] },
  );
  const web = p.services.find((s) => s.name === 'web')!;
  assert.deepEqual(web.command, ['z']);
  assert.deepEqual(Object.fromEntries(web.environment), { A: '1', B: '2', C: '3' });
  assert.deepEqual(
    web.ports.map((x) => x.container),
    [80, 81],
  );
  assert.deepEqual(
    web.volumes.map((v) => `${v.kind}:${v.target}`),
    ['anonymous:/cache', 'named:/data'],
  );
  assert.deepEqual(
    web.dependsOn.map((d) => d.service),
    ['db', 'cache'],
  );
  assert.deepEqual(p.files, ['/p/compose.yaml', '/p/override.yaml']);
});

test('errors after a merge point at the file that set the value', () => {
  const e = error(
    { 'compose.yaml': 'services:\n  web:\n    image: a\n', 'override.yaml': 'services:\n  web:\n    ports: ["99999"]\n' },
    { files: ['compose.yaml', 'override.yaml'] },
  );
  assert.equal(e.message, 'override.yaml:3:13: field services.web.ports[0]: port 99999 is out of range: ports are 1 to 65535');
});

test('several problems are collected, the first in file order leads', () => {
  const e = error({ 'compose.yaml': 'services:\n  a:\n    image: x\n    ports: ["0"]\n  b:\n    image: y\n    ports: ["70000"]\n' });
  assert.equal(e.problems.length, 2);
  assert.match(e.message, /^compose\.yaml:4:/);
});

test('.env errors are located in .env', () => {
  const e = error({ 'compose.yaml': 'services: {}\n', '.env': 'A=1\nB="open\n' });
  assert.equal(e.message, '.env:2:3: unterminated quoted value for B');
});

test('a missing env_file is an error unless not required', () => {
  const e = error({ 'compose.yaml': 'services:\n  a:\n    image: x\n    env_file: [missing.env]\n' });
  assert.equal(e.message, 'compose.yaml:4:16: field services.a.env_file[0]: env file "missing.env" not found');
  load({ 'compose.yaml': 'services:\n  a:\n    image: x\n    env_file: [{path: missing.env, required: false}]\n' });
});

test('unset variables are warnings; a missing file is a plain error', () => {
  const p = load({ 'compose.yaml': 'services:\n  a:\n    image: "x:${TAG}"\n' });
  assert.deepEqual(p.warnings, ['variable TAG is not set: using an empty string']);
  assert.throws(
    () => load({}, { files: ['nope.yaml'] }),
    (e: unknown) => e instanceof DevtoolError && e.message === 'Compose file nope.yaml not found',
  );
});

test('an empty file is an empty project; a non-map is an error', () => {
  assert.deepEqual(load({ 'compose.yaml': '' }).services, []);
  assert.equal(
    error({ 'compose.yaml': '- a\n' }).message,
    'compose.yaml:1:1: a Compose file must be a map of top-level keys (services, volumes...), not a list',
  );
});

test('the project name and folder', () => {
  const p = load({ 'compose.yaml': 'name: shop\nservices: {}\n' });
  assert.equal(p.name, 'shop');
  assert.equal(p.projectDir, '/p');
});

test('build args never see stored secrets', () => {
  const p = load(
    { 'compose.yaml': 'services:\n  a:\n    build: {context: ., args: {T: "${TOKEN:-none}", L: $LOCAL}}\n    environment: {T: $TOKEN}\n' },
    { env: { LOCAL: 'l' }, secrets: { TOKEN: 'secret' } },
  );
  const a = p.services[0]!;
  assert.deepEqual(Object.fromEntries(a.build!.args), { L: 'l', T: 'none' });
  assert.equal(a.environment.get('T'), 'secret');
});

test('a short volume spec with a Windows drive letter keeps the letter with its path, as Docker Compose reads it', () => {
  assert.deepEqual(volumeSpecParts('C:\\data:/data:ro'), ['C:\\data', '/data', 'ro']);
  assert.deepEqual(volumeSpecParts('d:/src/app:/app'), ['d:/src/app', '/app']);
  assert.deepEqual(volumeSpecParts('./src:/app:ro'), ['./src', '/app', 'ro']);
  assert.deepEqual(volumeSpecParts('data:/data'), ['data', '/data']);
  assert.deepEqual(volumeSpecParts('/cache'), ['/cache']);
  const web = load({ 'compose.yaml': 'services:\n  web:\n    image: x\n    volumes: ["C:\\\\data:/data:ro"]\n' }).services.find((s) => s.name === 'web')!;
  assert.deepEqual(
    web.volumes.map((v) => [v.kind, v.target, 'readOnly' in v && v.readOnly]),
    [['bind', '/data', true]],
  );
});
