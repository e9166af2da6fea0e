import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BinaryWriter, WireType } from '@bufbuild/protobuf/wire';
import { BuildkitProgress, decodeStatus, dockerfileLine, exitCodeOf } from './buildkit-status.ts';

// StatusResponse {vertexes=1, statuses=2, logs=3, warnings=4}; Vertex {digest=1, name=3, cached=4,
// started=5, completed=6, error=7}; VertexLog {vertex=1, msg=4}; VertexWarning {short=3}.
const timestamp = () => new BinaryWriter().tag(1, WireType.Varint).int64(1_700_000_000).finish();

function vertex(v: { digest: string; name: string; cached?: boolean; started?: boolean; completed?: boolean; error?: string }): Uint8Array {
  const w = new BinaryWriter()
    .tag(1, WireType.LengthDelimited)
    .string(v.digest)
    .tag(2, WireType.LengthDelimited)
    .string('sha256:input')
    .tag(3, WireType.LengthDelimited)
    .string(v.name);
  if (v.cached) w.tag(4, WireType.Varint).bool(true);
  if (v.started) w.tag(5, WireType.LengthDelimited).bytes(timestamp());
  if (v.completed) w.tag(6, WireType.LengthDelimited).bytes(timestamp());
  if (v.error) w.tag(7, WireType.LengthDelimited).string(v.error);
  return w.finish();
}

function status(parts: { vertexes?: Uint8Array[]; logs?: [string, string][]; warnings?: string[] }): Uint8Array {
  const w = new BinaryWriter();
  for (const v of parts.vertexes ?? []) w.tag(1, WireType.LengthDelimited).bytes(v);
  // A VertexStatus (download progress): skipped by the decoder.
  w.tag(2, WireType.LengthDelimited).bytes(new BinaryWriter().tag(1, WireType.LengthDelimited).string('layer').tag(4, WireType.Varint).int64(10).finish());
  for (const [digest, msg] of parts.logs ?? []) {
    w.tag(3, WireType.LengthDelimited).bytes(
      new BinaryWriter()
        .tag(1, WireType.LengthDelimited)
        .string(digest)
        .tag(3, WireType.Varint)
        .int64(1)
        .tag(4, WireType.LengthDelimited)
        .bytes(new TextEncoder().encode(msg))
        .finish(),
    );
  }
  for (const short of parts.warnings ?? [])
    w.tag(4, WireType.LengthDelimited).bytes(new BinaryWriter().tag(3, WireType.LengthDelimited).bytes(new TextEncoder().encode(short)).finish());
  return w.finish();
}

test('a StatusResponse decodes to vertexes, logs and warnings (other fields skipped)', () => {
  const s = decodeStatus(
    status({
      vertexes: [vertex({ digest: 'd1', name: '[1/2] FROM x', started: true, completed: true, cached: true })],
      logs: [['d1', 'hi\n']],
      warnings: ['careful'],
    }),
  );
  assert.deepEqual(s.vertexes, [{ digest: 'd1', name: '[1/2] FROM x', cached: true, started: true, completed: true, error: '' }]);
  assert.equal(new TextDecoder().decode(s.logs[0]!.msg), 'hi\n');
  assert.deepEqual(s.warnings, ['careful']);
});

test('progress prints each step once, its output by line, CACHED steps, and the failed step', () => {
  const lines: string[] = [];
  const p = new BuildkitProgress((l) => lines.push(l));
  const feed = (parts: Parameters<typeof status>[0]) => p.handle(decodeStatus(status(parts)));
  feed({ vertexes: [vertex({ digest: 'ctx', name: '[internal] load remote build context', started: true })] });
  feed({ vertexes: [vertex({ digest: 'ctx', name: '[internal] load remote build context', started: true, completed: true })] });
  feed({ vertexes: [vertex({ digest: 'from', name: '[1/3] FROM debian', started: true, completed: true, cached: true })] });
  feed({ vertexes: [vertex({ digest: 'run', name: '[2/3] RUN make', started: true })] });
  feed({
    vertexes: [vertex({ digest: 'run', name: '[2/3] RUN make', started: true })],
    logs: [
      ['run', 'compiling a'],
      ['run', 'nd b\nlinking\n'],
    ],
  });
  feed({ logs: [['run', 'about to fail']] });
  feed({
    vertexes: [
      vertex({ digest: 'run', name: '[2/3] RUN make', started: true, completed: true, error: 'executor failed running [/bin/sh -c make]: exit code: 2' }),
    ],
  });
  assert.deepEqual(lines, [
    '#2 CACHED [1/3] FROM debian',
    '#3 [2/3] RUN make',
    '#3 compiling and b',
    '#3 linking',
    '#3 about to fail',
    '#3 ERROR: executor failed running [/bin/sh -c make]: exit code: 2',
  ]);
  assert.deepEqual(p.failed, { step: '[2/3] RUN make', error: 'executor failed running [/bin/sh -c make]: exit code: 2' });
});

test('exit codes are read from both wordings of BuildKit', () => {
  assert.equal(exitCodeOf('executor failed running [/bin/sh -c exit 3]: exit code: 3'), 3);
  assert.equal(exitCodeOf('process "/bin/sh -c exit 3" did not complete successfully: exit code: 3'), 3);
  assert.equal(exitCodeOf('failed to compute cache key: "/x" not found'), undefined);
});

test('the Dockerfile line of a failed step, continuation lines and comments included', () => {
  const dockerfile =
    '# syntax=docker/dockerfile:1\nFROM debian AS base\n\nRUN apt-get update && \\\n    # a comment inside\n    apt-get install -y make\n' +
    'FROM base\nRUN   make   all\n';
  assert.equal(dockerfileLine(dockerfile, '[base 2/2] RUN apt-get update && apt-get install -y make'), 4);
  assert.equal(dockerfileLine(dockerfile, '[stage-1 1/1] RUN make all'), 8);
  assert.equal(dockerfileLine(dockerfile, '[2/2] RUN echo "expanded arg"'), undefined);
});
