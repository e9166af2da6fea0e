/**
 * The environment label added to a Kubernetes protobuf request body, at the wire level. kubectl
 * and other client-go programs send built-in kinds as `application/vnd.kubernetes.protobuf`: the
 * magic `k8s\0`, then a runtime.Unknown {typeMeta = 1 {apiVersion = 1, kind = 2}, raw = 2,
 * contentEncoding = 3, contentType = 4} whose `raw` is the object. Every object has its
 * ObjectMeta as field 1, and ObjectMeta's labels are field 11, a map<string, string> whose entries
 * are messages {key = 1, value = 2} (k8s.io/apimachinery generated.proto).
 *
 * The body is not decoded into a typed object (that would need every kind's schema and would drop
 * fields this build does not know): the bytes are copied as they are, and one map entry is added
 * to the labels of the object's metadata (and of its pod template's metadata, for the workloads
 * below). A map entry that repeats a key replaces the earlier one when the server decodes it, so
 * an existing environment label is overwritten, as in JSON bodies.
 */
import { BinaryReader, BinaryWriter, WireType } from '@bufbuild/protobuf/wire';
import { ENVIRONMENT_LABEL } from '../kube/labels.ts';

const MAGIC = Uint8Array.of(0x6b, 0x38, 0x73, 0x00); // "k8s\0"
const UNKNOWN_TYPE_META = 1;
const UNKNOWN_RAW = 2;
const UNKNOWN_CONTENT_ENCODING = 3;
const UNKNOWN_CONTENT_TYPE = 4;
const TYPE_META_KIND = 2;
const METADATA = 1;
const OBJECT_META_LABELS = 11;

/**
 * Paths (field numbers from the object) to each message that holds a pod or job template's
 * ObjectMeta as its field 1, by kind. From k8s.io/api generated.proto: Deployment, StatefulSet,
 * ReplicaSet: spec = 2, template = 3; DaemonSet: spec = 2, template = 2; Job: spec = 2,
 * template = 6; CronJob: spec = 2, jobTemplate = 5 (a JobTemplateSpec: metadata = 1, spec = 2);
 * ReplicationController: spec = 2, template = 3; PodTemplate: template = 2.
 */
export const TEMPLATE_PATHS: Readonly<Record<string, readonly (readonly number[])[]>> = {
  Deployment: [[2, 3]],
  StatefulSet: [[2, 3]],
  ReplicaSet: [[2, 3]],
  DaemonSet: [[2, 2]],
  Job: [[2, 6]],
  CronJob: [
    [2, 5],
    [2, 5, 2, 6],
  ],
  ReplicationController: [[2, 3]],
  PodTemplate: [[2]],
};

interface Field {
  no: number;
  wireType: WireType;
  /** Offsets of the whole field (tag included) and of a length-delimited field's content. */
  start: number;
  end: number;
  contentStart: number;
}

/** The fields of one message, in order; throws on bytes that are not a protobuf message. */
function fields(message: Uint8Array): Field[] {
  const reader = new BinaryReader(message);
  const found: Field[] = [];
  while (reader.pos < reader.len) {
    const start = reader.pos;
    const [no, wireType] = reader.tag();
    let contentStart = reader.pos;
    if (wireType === WireType.LengthDelimited) {
      const length = reader.uint32();
      contentStart = reader.pos;
      if (contentStart + length > reader.len) throw new Error('truncated field');
      reader.pos = contentStart + length;
    } else {
      reader.skip(wireType, no);
    }
    found.push({ no, wireType, start, end: reader.pos, contentStart });
  }
  return found;
}

function lengthDelimited(no: number, content: Uint8Array): Uint8Array {
  return new BinaryWriter().tag(no, WireType.LengthDelimited).bytes(content).finish();
}

function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/**
 * `message` with `tail` appended inside the message at `path` (field numbers, each a
 * length-delimited field; the last occurrence of a repeated one, since occurrences merge).
 * Missing messages along the path are created from index `createFrom` on; before it, a missing one
 * means there is nothing to change (undefined).
 */
export function appendInside(message: Uint8Array, path: readonly number[], tail: Uint8Array, createFrom = 0): Uint8Array | undefined {
  if (path.length === 0) return concat(message, tail);
  const [no, ...rest] = path as [number, ...number[]];
  const field = fields(message)
    .filter((f) => f.no === no && f.wireType === WireType.LengthDelimited)
    .at(-1);
  if (!field) {
    if (createFrom > 0) return undefined;
    return concat(message, lengthDelimited(no, appendInside(new Uint8Array(), rest, tail, 0)!));
  }
  const inner = appendInside(message.subarray(field.contentStart, field.end), rest, tail, Math.max(0, createFrom - 1));
  if (inner === undefined) return undefined;
  return concat(message.subarray(0, field.start), lengthDelimited(no, inner), message.subarray(field.end));
}

/** One entry of ObjectMeta.labels, as a field of ObjectMeta. */
export function labelEntry(key: string, value: string): Uint8Array {
  const entry = new BinaryWriter().tag(1, WireType.LengthDelimited).string(key).tag(2, WireType.LengthDelimited).string(value).finish();
  return lengthDelimited(OBJECT_META_LABELS, entry);
}

/** The kind named by a runtime.Unknown's typeMeta, or undefined. */
function unknownKind(unknown: Uint8Array, all: Field[]): string | undefined {
  const typeMeta = all.find((f) => f.no === UNKNOWN_TYPE_META && f.wireType === WireType.LengthDelimited);
  if (!typeMeta) return undefined;
  const meta = unknown.subarray(typeMeta.contentStart, typeMeta.end);
  const kind = fields(meta).find((f) => f.no === TYPE_META_KIND && f.wireType === WireType.LengthDelimited);
  return kind ? new TextDecoder().decode(meta.subarray(kind.contentStart, kind.end)) : undefined;
}

/**
 * The body with the environment label on the object (and its pod templates), or undefined when it
 * is not a Kubernetes protobuf object this can change (no magic, an encoded or non-protobuf raw,
 * malformed bytes): it is then forwarded as sent and reported.
 */
export function labelProtobufBody(body: Uint8Array, environment: string): Uint8Array | undefined {
  if (body.length < MAGIC.length || MAGIC.some((b, i) => body[i] !== b)) return undefined;
  const unknown = body.subarray(MAGIC.length);
  try {
    const all = fields(unknown);
    // A scalar field that occurs more than once takes its last value.
    const text = (no: number) => {
      const f = all.filter((x) => x.no === no && x.wireType === WireType.LengthDelimited).at(-1);
      return f ? new TextDecoder().decode(unknown.subarray(f.contentStart, f.end)) : '';
    };
    if (text(UNKNOWN_CONTENT_ENCODING) !== '') return undefined;
    const contentType = text(UNKNOWN_CONTENT_TYPE);
    if (contentType !== '' && contentType !== 'application/vnd.kubernetes.protobuf') return undefined;
    const raw = all.filter((f) => f.no === UNKNOWN_RAW && f.wireType === WireType.LengthDelimited).at(-1);
    if (!raw) return undefined;
    const entry = labelEntry(ENVIRONMENT_LABEL, environment);
    let object: Uint8Array = unknown.subarray(raw.contentStart, raw.end);
    object = appendInside(object, [METADATA], entry)!;
    // A template's metadata is created when missing, the template itself never (as in JSON bodies).
    for (const path of TEMPLATE_PATHS[unknownKind(unknown, all) ?? ''] ?? []) {
      object = appendInside(object, [...path, METADATA], entry, path.length) ?? object;
    }
    return concat(MAGIC, unknown.subarray(0, raw.start), lengthDelimited(UNKNOWN_RAW, object), unknown.subarray(raw.end));
  } catch {
    return undefined;
  }
}
