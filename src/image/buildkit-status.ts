/**
 * BuildKit's progress, as the Docker daemon streams it during a BuildKit build: JSON lines
 * `{"id":"moby.buildkit.trace","aux":"<base64>"}` whose payload is a moby.buildkit.v1.StatusResponse
 * (control.proto of BuildKit's control service). Decoded at the wire level (the
 * few fields used here; the rest is skipped), then printed like BuildKit's plain progress: each
 * step once when it starts (`#3 [2/3] RUN make`), its output lines (`#3 ...`), CACHED and ERROR.
 */
import { BinaryReader, WireType } from '@bufbuild/protobuf/wire';

export interface Vertex {
  readonly digest: string;
  readonly name: string;
  readonly cached: boolean;
  readonly started: boolean;
  readonly completed: boolean;
  readonly error: string;
}

export interface VertexLog {
  readonly vertex: string;
  readonly msg: Uint8Array;
}

export interface StatusResponse {
  readonly vertexes: Vertex[];
  readonly logs: VertexLog[];
  /** Warnings' short texts. */
  readonly warnings: string[];
}

/** Calls `each` for every field of the message in `buf`. */
function fields(buf: Uint8Array, each: (field: number, wire: WireType, r: BinaryReader) => boolean): void {
  const r = new BinaryReader(buf);
  while (r.pos < r.len) {
    const [field, wire] = r.tag();
    if (!each(field, wire, r)) r.skip(wire, field);
  }
}

export function decodeStatus(buf: Uint8Array): StatusResponse {
  const out: StatusResponse = { vertexes: [], logs: [], warnings: [] };
  fields(buf, (field, wire, r) => {
    if (wire !== WireType.LengthDelimited) return false;
    if (field === 1) out.vertexes.push(decodeVertex(r.bytes()));
    else if (field === 3) out.logs.push(decodeLog(r.bytes()));
    else if (field === 4) out.warnings.push(decodeWarning(r.bytes()));
    else return false;
    return true;
  });
  return out;
}

function decodeVertex(buf: Uint8Array): Vertex {
  const v = { digest: '', name: '', cached: false, started: false, completed: false, error: '' };
  fields(buf, (field, wire, r) => {
    if (field === 1 && wire === WireType.LengthDelimited) v.digest = r.string();
    else if (field === 3 && wire === WireType.LengthDelimited) v.name = r.string();
    else if (field === 4 && wire === WireType.Varint) v.cached = r.bool();
    else if (field === 5 && wire === WireType.LengthDelimited) {
      r.bytes();
      v.started = true;
    } else if (field === 6 && wire === WireType.LengthDelimited) {
      r.bytes();
      v.completed = true;
    } else if (field === 7 && wire === WireType.LengthDelimited) v.error = r.string();
    else return false;
    return true;
  });
  return v;
}

function decodeLog(buf: Uint8Array): VertexLog {
  let vertex = '';
  let msg: Uint8Array = new Uint8Array();
  fields(buf, (field, wire, r) => {
    if (field === 1 && wire === WireType.LengthDelimited) vertex = r.string();
    else if (field === 4 && wire === WireType.LengthDelimited) msg = r.bytes();
    else return false;
    return true;
  });
  return { vertex, msg };
}

function decodeWarning(buf: Uint8Array): string {
  let short = '';
  fields(buf, (field, wire, r) => {
    if (field === 3 && wire === WireType.LengthDelimited) short = new TextDecoder().decode(r.bytes());
    else return false;
    return true;
  });
  return short;
}

interface VertexState {
  readonly number: number;
  name: string;
  announced: boolean;
  done: boolean;
  partial: string;
}

/** Steps whose progress is noise (the context upload, image metadata lookups) unless they fail. */
const QUIET = /^(\[internal\]|copy \/context \/)/;

/** Turns successive StatusResponses into plain progress lines, and remembers the failed step. */
export class BuildkitProgress {
  private readonly vertexes = new Map<string, VertexState>();
  /** The first step that failed: its name and BuildKit's error. */
  failed: { step: string; error: string } | undefined;

  constructor(private readonly emit: (line: string) => void) {}

  handle(status: StatusResponse): void {
    for (const v of status.vertexes) {
      const state = this.state(v.digest, v.name);
      if (v.name) state.name = v.name;
      const quiet = QUIET.test(state.name);
      if (v.started && !state.announced && !quiet && !v.cached) this.announce(state);
      if (v.error && !state.done) {
        this.announce(state);
        this.flush(state);
        this.emit(`#${state.number} ERROR: ${v.error}`);
        this.failed ??= { step: state.name, error: v.error };
        state.done = true;
      } else if (v.completed && !state.done) {
        this.flush(state);
        if (v.cached && !quiet) this.emit(`#${state.number} CACHED ${state.name}`);
        state.done = true;
      }
    }
    for (const log of status.logs) {
      const state = this.state(log.vertex, '');
      this.announce(state);
      const lines = (state.partial + new TextDecoder().decode(log.msg)).split(/\r?\n|\r/);
      state.partial = lines.pop()!;
      for (const line of lines) this.emit(`#${state.number} ${line}`);
    }
    for (const w of status.warnings) this.emit(`WARNING: ${w.trim()}`);
  }

  private state(digest: string, name: string): VertexState {
    let s = this.vertexes.get(digest);
    if (!s) {
      s = { number: this.vertexes.size + 1, name, announced: false, done: false, partial: '' };
      this.vertexes.set(digest, s);
    }
    return s;
  }

  private announce(s: VertexState): void {
    if (s.announced) return;
    s.announced = true;
    this.emit(`#${s.number} ${s.name}`);
  }

  private flush(s: VertexState): void {
    if (s.partial) this.emit(`#${s.number} ${s.partial}`);
    s.partial = '';
  }
}

/** "... exit code: 3" (BuildKit's executor errors, old and new wording) -> 3. */
export function exitCodeOf(error: string): number | undefined {
  const m = /exit code:\s*(\d+)/.exec(error);
  return m ? Number(m[1]) : undefined;
}

/**
 * The Dockerfile line where a step starts, from BuildKit's step name (`[stage 2/3] RUN make`): the
 * instruction is looked up in the Dockerfile (continuation lines joined, spaces collapsed).
 * Undefined when it cannot be told, e.g. a step whose name shows expanded build arguments.
 */
export function dockerfileLine(dockerfile: string, step: string): number | undefined {
  const wanted = collapse(step.replace(/^\[[^\]]*\]\s*/, ''));
  if (!wanted) return undefined;
  const lines = dockerfile.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    if (/^\s*(#|$)/.test(lines[i]!)) continue;
    const start = i;
    let text = lines[i]!;
    while (/\\\s*$/.test(text) && i + 1 < lines.length) {
      i++;
      if (/^\s*#/.test(lines[i]!)) continue;
      text = `${text.replace(/\\\s*$/, ' ')}${lines[i]}`;
    }
    if (collapse(text).toLowerCase() === wanted.toLowerCase()) return start + 1;
  }
  return undefined;
}

function collapse(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}
