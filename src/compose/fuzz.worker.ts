/**
 * The property test's worker (see fuzz.test.ts): mutates the fixtures' Compose files, as text
 * and as trees, and checks that load + translate either returns well-formed objects or throws a
 * LocatedError. It runs in a worker thread so the test can stop it if one case hangs: before each
 * case it posts the case's text, so a hang can be reported with its input.
 */
import fc from 'fast-check';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parentPort, workerData } from 'node:worker_threads';
import { parse, stringify } from 'yaml';
import { DevtoolError } from '../base/errors.ts';
import { isDnsLabel } from '../kube/naming.ts';
import { LocatedError } from '../yaml/errors.ts';
import { loadComposeTexts } from './load.ts';
import { testdata } from './testing.ts';
import { translateCompose } from './translate.ts';

export interface FuzzRequest {
  readonly seed: number;
  readonly textRuns: number;
  readonly treeRuns: number;
}

export type FuzzMessage =
  | { readonly type: 'case'; readonly text: string }
  | { readonly type: 'done'; readonly stats: Record<string, number> }
  | { readonly type: 'failed'; readonly error: string };

function seeds(): string[] {
  const out: string[] = [];
  const collect = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) collect(path);
      else if (/^(docker-)?compose.*\.ya?ml$/.test(entry.name)) out.push(readFileSync(path, 'utf8'));
    }
  };
  collect(testdata);
  return out.sort();
}

const snippets = [
  ':',
  ': ',
  '-',
  '- ',
  '[',
  ']',
  '{',
  '}',
  ',',
  '&a ',
  '*a',
  '<<: *a\n',
  '!!str ',
  '!custom ',
  '|\n',
  '>\n',
  '#',
  '"',
  "'",
  '\\',
  '\n',
  '\n  ',
  '\t',
  '  ',
  '$',
  '$$',
  '${',
  '}',
  '${X}',
  '${X:-d}',
  '${X:?boom}',
  '${X-${Y:-z}}',
  '%',
  '@',
  '`',
  '~',
  '0',
  '65536',
  '70000',
  '-1',
  '1.5',
  'null',
  'true',
  'no',
  'yes',
  '__proto__',
  'constructor',
  'x-ext: 1\n',
  'image: ',
  'build: .',
  'ports:',
  'volumes:',
  'depends_on:',
  'healthcheck:',
  'endpoints:',
  '8080:80',
  '1-65535:1-65535',
  '/udp',
  'data:/data',
  './src:/app',
  'restart: "no"',
  'scale: ',
  'CMD-SHELL',
  'NONE',
  'service_healthy',
  'service_completed_successfully',
  '\u00e9',
  '\u{1F600}',
];

const values: unknown[] = [
  0,
  -1,
  1,
  80,
  65535,
  65536,
  70000,
  1.5,
  Number.MAX_SAFE_INTEGER,
  '',
  'x',
  'X',
  '8080:80',
  '70000:80',
  '80-90:80-90',
  '1-65535',
  '127.0.0.1:8080:80',
  '[::1]:80:80',
  '53/udp',
  '80/carrier-pigeon',
  '${X}',
  '${X:?boom}',
  '$$',
  '${',
  'no',
  'always',
  'never',
  'on-failure:3',
  'any',
  '5x',
  '1m30s',
  '10',
  '/data',
  'data:/data',
  'data:/data:ro',
  './src:/app',
  'nope:/x',
  'CMD',
  ['CMD'],
  ['CMD', 'true'],
  ['NONE'],
  ['CMD-SHELL'],
  ['bogus', 'x'],
  null,
  true,
  false,
  {},
  [],
  { condition: 'service_healthy' },
  { condition: 'service_completed_successfully' },
  { path: '/', service: 'web', port: 80 },
  [{ path: '/', service: 'db', port: 5432 }],
  { target: 80, published: '8080' },
  { type: 'volume', target: '/d' },
  { type: 'bind', source: '.', target: 'rel' },
  '__proto__',
  'constructor',
  'toString',
  { size: 'huge' },
  { http: { path: 'x', port: 0 } },
  'a'.repeat(300),
];

const fields = [
  'image',
  'build',
  'command',
  'entrypoint',
  'working_dir',
  'environment',
  'env_file',
  'ports',
  'expose',
  'volumes',
  'depends_on',
  'healthcheck',
  'restart',
  'deploy',
  'scale',
  'cap_add',
  'cap_drop',
  'stop_grace_period',
  'labels',
  'extends',
  'privileged',
  'services',
  'endpoints',
  'x-thing',
  'imgae',
  'name',
  'version',
  'driver_opts',
  'test',
  'http',
  'rules',
  'condition',
  'max_attempts',
];

const textMutation = fc.oneof(
  fc.record({ op: fc.constant('delete' as const), at: fc.nat(), len: fc.integer({ min: 1, max: 30 }) }),
  fc.record({ op: fc.constant('insert' as const), at: fc.nat(), text: fc.constantFrom(...snippets) }),
  fc.record({ op: fc.constant('insertRandom' as const), at: fc.nat(), text: fc.string({ maxLength: 8 }) }),
  fc.record({ op: fc.constant('duplicateLine' as const), at: fc.nat() }),
  fc.record({ op: fc.constant('indent' as const), at: fc.nat(), by: fc.integer({ min: -4, max: 4 }) }),
);
type TextMutation = typeof textMutation extends fc.Arbitrary<infer T> ? T : never;

function mutateText(text: string, m: TextMutation): string {
  const at = text.length === 0 ? 0 : m.at % (text.length + 1);
  switch (m.op) {
    case 'delete':
      return text.slice(0, at) + text.slice(at + m.len);
    case 'insert':
    case 'insertRandom':
      return text.slice(0, at) + m.text + text.slice(at);
    case 'duplicateLine':
    case 'indent': {
      const lines = text.split('\n');
      const i = m.at % lines.length;
      if (m.op === 'duplicateLine') lines.splice(i, 0, lines[i]!);
      else lines[i] = m.by >= 0 ? ' '.repeat(m.by) + lines[i] : lines[i]!.slice(-m.by);
      return lines.join('\n');
    }
  }
}

const treeEdit = fc.record({
  path: fc.array(fc.nat(), { minLength: 0, maxLength: 6 }),
  op: fc.constantFrom('set', 'delete', 'addField', 'wrapInList'),
  value: fc.oneof(fc.constantFrom(...values), fc.jsonValue({ maxDepth: 2 }), fc.string({ maxLength: 12 })),
  field: fc.constantFrom(...fields),
});
type TreeEdit = typeof treeEdit extends fc.Arbitrary<infer T> ? T : never;

function editTree(root: unknown, e: TreeEdit): unknown {
  const isContainer = (v: unknown): v is Record<string, unknown> | unknown[] => typeof v === 'object' && v !== null;
  if (!isContainer(root)) return e.value;
  let parent: Record<string, unknown> | unknown[] = root;
  let key: string | number | undefined;
  for (const step of e.path) {
    const keys: (string | number)[] = Array.isArray(parent) ? parent.map((_, i) => i) : Object.keys(parent);
    if (keys.length === 0) break;
    const k = keys[step % keys.length]!;
    const child: unknown = (parent as Record<string | number, unknown>)[k];
    key = k;
    if (!isContainer(child)) break;
    parent = child;
    key = undefined;
  }
  const target = parent as Record<string | number, unknown>;
  if (e.op === 'addField' && !Array.isArray(parent))
    Object.defineProperty(parent, e.field, { value: e.value, enumerable: true, writable: true, configurable: true });
  else if (key === undefined) return root;
  else if (e.op === 'set') target[key] = e.value;
  else if (e.op === 'wrapInList') target[key] = [target[key]];
  else if (Array.isArray(parent)) parent.splice(key as number, 1);
  else delete target[key];
  return root;
}

const stats: Record<string, number> = { objects: 0, located: 0 };

/** One case: load and translate; the property holds when the outcome is well-formed. */
function check(text: string, extra: { domain: boolean; envFile: string | undefined }): void {
  parentPort!.postMessage({ type: 'case', text } satisfies FuzzMessage);
  const files: Record<string, string> = { '/p/.env': 'X=1\nEMPTY=\n' };
  if (extra.envFile !== undefined) files['/p/common.env'] = extra.envFile;
  try {
    const project = loadComposeTexts([{ path: '/p/compose.yaml', text }], {
      cwd: '/p',
      env: { Y: 'y' },
      secrets: { S: 's' },
      fileAccess: { readFile: (p) => (Object.hasOwn(files, p) ? files[p] : undefined) },
    });
    const images = Object.fromEntries(project.services.map((s) => [s.name, `img/${s.name}:1`]));
    const t = translateCompose(project, { name: 'app', namespace: 'dev', ...(extra.domain ? { endpointDomain: 'example.com' } : {}), images });
    for (const o of t.objects) {
      if (!isDnsLabel(o.metadata.name)) throw new Error(`object name ${JSON.stringify(o.metadata.name)} is not a DNS label`);
      if (o.metadata.labels?.['devtool.dev/environment'] !== 'app') throw new Error(`${o.kind}/${o.metadata.name} lacks the environment label`);
    }
    JSON.stringify(t.objects);
    stats['objects']!++;
  } catch (err) {
    if (err instanceof LocatedError) {
      if (err.message.includes('\n')) throw new Error(`multi-line error: ${err.message}`);
      stats['located']!++;
      return;
    }
    if (err instanceof DevtoolError) throw new Error(`a DevtoolError without a location: ${err.message}`);
    throw err;
  }
}

function run(request: FuzzRequest): void {
  const all = seeds();
  const options = fc.record({
    domain: fc.boolean(),
    envFile: fc.option(fc.constantFrom('A=1\n', 'B="x\n', 'BAD KEY=1\n', '1X=2\n', 'C=${X:?no}\n'), { nil: undefined }),
  });
  fc.assert(
    fc.property(fc.nat(all.length - 1), fc.array(textMutation, { minLength: 1, maxLength: 5 }), options, (i, mutations, extra) => {
      check(mutations.reduce(mutateText, all[i]!), extra);
    }),
    { seed: request.seed, numRuns: request.textRuns },
  );
  fc.assert(
    fc.property(fc.nat(all.length - 1), fc.array(treeEdit, { minLength: 1, maxLength: 4 }), options, (i, edits, extra) => {
      let tree: unknown;
      try {
        tree = parse(all[i]!, { merge: true });
      } catch {
        return; // a seed that is itself malformed (the malformed-yaml fixture)
      }
      check(stringify(edits.reduce(editTree, tree), { aliasDuplicateObjects: false }), extra);
    }),
    { seed: request.seed + 1, numRuns: request.treeRuns },
  );
}

try {
  run(workerData as FuzzRequest);
  parentPort!.postMessage({ type: 'done', stats } satisfies FuzzMessage);
} catch (err) {
  parentPort!.postMessage({ type: 'failed', error: err instanceof Error ? err.message : String(err) } satisfies FuzzMessage);
}
