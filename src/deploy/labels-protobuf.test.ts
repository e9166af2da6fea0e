import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { BinaryReader, BinaryWriter, WireType } from '@bufbuild/protobuf/wire';
import { appendInside, labelEntry, labelProtobufBody } from './labels-protobuf.ts';

const L = 'devtool.dev/environment';
/** Request bodies kubectl 1.33 really sent (`-v=9` hex dumps of `kubectl create ... --dry-run=server`). */
const captured = (name: string) => Uint8Array.from(Buffer.from(readFileSync(join(import.meta.dirname, 'testdata', `${name}.pb.hex`), 'utf8').trim(), 'hex'));

/** Length-delimited fields of a message, by number, in order (an independent, minimal decoder). */
function children(message: Uint8Array): Map<number, Uint8Array[]> {
  const r = new BinaryReader(message);
  const out = new Map<number, Uint8Array[]>();
  while (r.pos < r.len) {
    const [no, wt] = r.tag();
    if (wt !== WireType.LengthDelimited) {
      r.skip(wt, no);
      continue;
    }
    out.set(no, [...(out.get(no) ?? []), r.bytes()]);
  }
  return out;
}

/** The message at a path of field numbers (the last occurrence at each step). */
function at(message: Uint8Array, path: number[]): Uint8Array | undefined {
  let m: Uint8Array | undefined = message;
  for (const no of path) m = m && children(m).get(no)?.at(-1);
  return m;
}

/** ObjectMeta.labels (field 11) as the server decodes a map: later entries replace earlier ones. */
function labels(objectMeta: Uint8Array | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const entry of children(objectMeta ?? new Uint8Array()).get(11) ?? []) {
    const kv = children(entry);
    out[new TextDecoder().decode(kv.get(1)?.[0])] = new TextDecoder().decode(kv.get(2)?.[0]);
  }
  return out;
}

const MAGIC = 4;
const object = (body: Uint8Array) => at(body.subarray(MAGIC), [2])!;

test('kubectl create deployment: the object and its pod template get the label, nothing else changes', () => {
  const body = captured('kubectl-create-deployment');
  const before = object(body);
  assert.deepEqual(labels(at(before, [1])), { app: 'web' });
  const out = labelProtobufBody(body, 'shop');
  assert.ok(out);
  const after = object(out);
  assert.deepEqual(labels(at(after, [1])), { app: 'web', [L]: 'shop' });
  assert.deepEqual(labels(at(after, [2, 3, 1])), { app: 'web', [L]: 'shop' }, 'pod template');
  assert.deepEqual(at(after, [2, 2]), at(before, [2, 2]), 'the selector is untouched (immutable)');
  assert.deepEqual(at(after, [2, 3, 2]), at(before, [2, 3, 2]), 'the pod spec is untouched');
  assert.deepEqual(at(after, [1])!.subarray(0, at(before, [1])!.length), at(before, [1]), 'metadata: the old bytes, then one entry');
  // The envelope: typeMeta, contentEncoding and contentType kept as they were.
  const env = children(out.subarray(MAGIC));
  const envBefore = children(body.subarray(MAGIC));
  for (const no of [1, 3, 4]) assert.deepEqual(env.get(no), envBefore.get(no));
  assert.deepEqual(out.subarray(0, MAGIC), body.subarray(0, MAGIC));
});

test('kubectl create secret: metadata labels created where there were none', () => {
  const body = captured('kubectl-create-secret');
  assert.deepEqual(labels(at(object(body), [1])), {});
  const out = labelProtobufBody(body, 'e')!;
  assert.deepEqual(labels(at(object(out), [1])), { [L]: 'e' });
  assert.equal(at(object(out), [1, 1]) && new TextDecoder().decode(at(object(out), [1, 1])), 'app-token');
});

test('kubectl create cronjob: the job template and its pod template get the label', () => {
  const out = labelProtobufBody(captured('kubectl-create-cronjob'), 'e')!;
  const cron = object(out);
  assert.equal(labels(at(cron, [1]))[L], 'e');
  assert.equal(labels(at(cron, [2, 5, 1]))[L], 'e', 'jobTemplate.metadata');
  assert.equal(labels(at(cron, [2, 5, 2, 6, 1]))[L], 'e', 'jobTemplate.spec.template.metadata');
});

test('an environment label already there is replaced, other entries kept', () => {
  const meta = new BinaryWriter().tag(1, WireType.LengthDelimited).string('c').finish();
  const withOld = appendInside(meta, [], labelEntry(L, 'other'))!;
  const withBoth = appendInside(withOld, [], labelEntry(L, 'mine'))!;
  assert.deepEqual(labels(withBoth), { [L]: 'mine' });
});

test('templates are labelled only where the body has one; metadata is created', () => {
  const spec = new BinaryWriter().tag(1, WireType.Varint).int32(2).finish(); // replicas: 2, no template
  const deployment = new BinaryWriter().tag(2, WireType.LengthDelimited).bytes(spec).finish();
  const envelope = new BinaryWriter()
    .tag(1, WireType.LengthDelimited)
    .bytes(new BinaryWriter().tag(1, WireType.LengthDelimited).string('apps/v1').tag(2, WireType.LengthDelimited).string('Deployment').finish())
    .tag(2, WireType.LengthDelimited)
    .bytes(deployment)
    .finish();
  const out = labelProtobufBody(Uint8Array.from([0x6b, 0x38, 0x73, 0x00, ...envelope]), 'e')!;
  const obj = object(out);
  assert.deepEqual(labels(at(obj, [1])), { [L]: 'e' });
  assert.equal(at(obj, [2, 3]), undefined, 'no pod template made up');
  assert.deepEqual(at(obj, [2]), spec);
});

test('what is not a Kubernetes protobuf object passes unchanged (undefined)', () => {
  assert.equal(labelProtobufBody(new TextEncoder().encode('{"kind":"Secret"}'), 'e'), undefined, 'no magic');
  assert.equal(labelProtobufBody(Uint8Array.of(0x6b, 0x38, 0x73, 0x00, 0x0a, 0x50, 0x01), 'e'), undefined, 'truncated');
  const body = captured('kubectl-create-secret');
  assert.equal(labelProtobufBody(body.subarray(0, body.length - 10), 'e'), undefined, 'cut short');
  const gzipped = Uint8Array.from([...body, 0x1a, 0x04, ...new TextEncoder().encode('gzip')]);
  assert.equal(labelProtobufBody(gzipped, 'e'), undefined, 'an encoded raw object');
});
