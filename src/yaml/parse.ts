/**
 * YAML to plain values, remembering where every value came from.
 *
 * The `yaml` package parses (with YAML 1.1 merge keys enabled); this module then builds plain
 * objects and arrays itself instead of calling toJS(), for three reasons: each value's position is
 * recorded in a SourceMap, so any later pass (interpolation, schema validation, semantic checks)
 * can report FILE:LINE:COL; aliases are expanded into fresh copies, so a later pass may rewrite one
 * copy in place without touching the others; and hostile input (alias bombs, self-referencing
 * aliases, absurd nesting) ends in a located error instead of a hang or a stack overflow.
 */
import { LineCounter, isAlias, isMap, isPair, isScalar, isSeq, parseDocument, visit, type Alias, type Document, type Node, type YAMLMap } from 'yaml';
import { LocatedError, type Path, type Problem, type SourcePos } from './errors.ts';
import { readQuickly, UNREAD } from './fast.ts';

interface EntryPos {
  /** Where the key was written (maps only). */
  readonly key?: SourcePos;
  readonly value: SourcePos;
}

interface ContainerPos {
  readonly pos: SourcePos;
  readonly entries: Map<string | number, EntryPos>;
}

/**
 * Positions of the values of one or more parsed files, keyed by the objects and arrays built from
 * them. A later pass that builds new containers (a merge of several files) records their entries
 * here too, so errors found after the merge still point at the file that set the value.
 */
export class SourceMap {
  private readonly containers = new WeakMap<object, ContainerPos>();
  /** Roots read quickly (fast.ts), each with the exact reading made the first time it is asked for. */
  private readonly deferred = new WeakMap<object, { exact: () => LocatedYaml; read?: LocatedYaml }>();

  constructor(
    /** Where to point when nothing better is known: the start of the first file. */
    readonly fallback: SourcePos,
  ) {}

  setContainer(container: object, pos: SourcePos): void {
    this.containers.set(container, { pos, entries: new Map() });
  }

  setEntry(container: object, key: string | number, entry: EntryPos): void {
    let c = this.containers.get(container);
    if (!c) {
      c = { pos: entry.key ?? entry.value, entries: new Map() };
      this.containers.set(container, c);
    }
    c.entries.set(key, entry);
  }

  /** Copies the recorded position of `from[fromKey]` to `to[toKey]`. */
  copyEntry(from: object, fromKey: string | number, to: object, toKey: string | number = fromKey): void {
    const entry = this.containers.get(from)?.entries.get(fromKey);
    if (entry) this.setEntry(to, toKey, entry);
  }

  /**
   * Marks `root` as read without positions: the first question about it reads the file again the
   * exact way (`exact`) and answers from that reading, whose values have the same shape. If the
   * exact reading refuses the file, its LocatedError is thrown then.
   */
  defer(root: object, exact: () => LocatedYaml): void {
    this.deferred.set(root, { exact });
  }

  private readonly findExactly = (root: object, path: Path, part: 'key' | 'value'): SourcePos => {
    const exact = this.exactReading(root)!;
    return exact.sources.locate(exact.value, path, part);
  };

  private exactReading(root: object): LocatedYaml | undefined {
    const d = this.deferred.get(root);
    if (d) d.read ??= d.exact();
    return d?.read;
  }

  containerPos(container: object): SourcePos | undefined {
    const exact = this.exactReading(container);
    if (exact) return exact.sources.containerPos(exact.value as object);
    return this.containers.get(container)?.pos;
  }

  entry(container: object, key: string | number): EntryPos | undefined {
    const exact = this.exactReading(container);
    if (exact) return exact.sources.entry(exact.value as object, key);
    return this.containers.get(container)?.entries.get(key);
  }

  /**
   * Where the value at `path` under `root` was written; `part: 'key'` gives the key's position
   * instead (for "unknown field" errors). When the path goes beyond what was written (a missing
   * field), the deepest enclosing value that exists is returned.
   */
  locate(root: unknown, path: Path, part: 'key' | 'value' = 'value'): SourcePos {
    if (isContainer(root) && this.deferred.has(root)) {
      // Normalizing records a position with most parts of the model, for errors found later; the
      // file is read again the exact way only if one of them is looked at.
      return new DeferredPos(this.findExactly, root, [...path], part);
    }
    let current: unknown = root;
    let best = (isContainer(root) && this.containerPos(root)) || this.fallback;
    for (let i = 0; i < path.length; i++) {
      if (!isContainer(current)) break;
      const key = path[i]!;
      const entry = this.entry(current, key);
      if (!entry) break;
      const last = i === path.length - 1;
      best = last && part === 'key' && entry.key ? entry.key : entry.value;
      current = childOf(current, key);
    }
    return best;
  }
}

/**
 * A position worked out the first time one of its fields is read, from the exact reading of a
 * file read quickly. Its fields are getters; it has no own data to print or copy, so code reads
 * file, line and col (formatPos), as it does.
 */
class DeferredPos implements SourcePos {
  #pos?: SourcePos;
  readonly #find: (root: object, path: Path, part: 'key' | 'value') => SourcePos;
  readonly #root: object;
  readonly #path: Path;
  readonly #part: 'key' | 'value';

  constructor(find: (root: object, path: Path, part: 'key' | 'value') => SourcePos, root: object, path: Path, part: 'key' | 'value') {
    this.#find = find;
    this.#root = root;
    this.#path = path;
    this.#part = part;
  }

  private get pos(): SourcePos {
    this.#pos ??= this.#find(this.#root, this.#path, this.#part);
    return this.#pos;
  }
  get file(): string {
    return this.pos.file;
  }
  get line(): number {
    return this.pos.line;
  }
  get col(): number {
    return this.pos.col;
  }
  toJSON(): SourcePos {
    return { file: this.file, line: this.line, col: this.col };
  }
}

function isContainer(v: unknown): v is object {
  return typeof v === 'object' && v !== null;
}

function childOf(container: object, key: string | number): unknown {
  if (Array.isArray(container)) return typeof key === 'number' ? container[key] : undefined;
  return Object.hasOwn(container, key) ? (container as Record<string, unknown>)[key as string] : undefined;
}

/** A parsed file: its value and where each part of it was written. */
export interface LocatedYaml {
  readonly file: string;
  readonly value: unknown;
  readonly sources: SourceMap;
}

export interface ParseOptions {
  /** Share one SourceMap between several files (for a later merge). */
  readonly sources?: SourceMap;
  /**
   * Upper bound on the number of values built, aliases expanded; protects against alias bombs.
   * Default: 100,000 or the length of the text, whichever is larger, so a long document that
   * repeats little (8,000 Compose services) is read, while expansion stays linear in its size.
   */
  readonly maxNodes?: number;
  /** Upper bound on nesting depth. */
  readonly maxDepth?: number;
  /**
   * Read with js-yaml and find positions only when asked (fast.ts): for a document read once and
   * not merged with another by position (a merge asks where every part came from at once).
   */
  readonly quick?: boolean;
}

const defaultMaxNodes = 100_000;
const defaultMaxDepth = 200;

/**
 * Parses one YAML document. `file` is the name used in error messages (as the user should read
 * it, usually relative to the working directory). Throws LocatedError on malformed YAML.
 */
export function parseYaml(text: string, file: string, options: ParseOptions = {}): LocatedYaml {
  const lineCounter = new LineCounter();
  const at = (offset: number): SourcePos => {
    const { line, col } = lineCounter.linePos(offset);
    return { file, line, col };
  };
  const sources = options.sources ?? new SourceMap({ file, line: 1, col: 1 });
  const maxNodes = options.maxNodes ?? Math.max(defaultMaxNodes, text.length);
  const maxDepth = options.maxDepth ?? defaultMaxDepth;
  if (options.quick) {
    const value = readQuickly(text, maxNodes, maxDepth);
    if (value !== UNREAD) {
      if (isContainer(value)) sources.defer(value, () => parseYaml(text, file, { maxNodes, maxDepth }));
      return { file, value, sources };
    }
  }
  let doc: Document.Parsed;
  try {
    doc = parseDocument(text, {
      lineCounter,
      merge: true,
      prettyErrors: false,
      // Checked by the Builder with the map it fills: the library compares each key with every
      // earlier one, quadratic in a map's size (8,000 Compose services).
      uniqueKeys: false,
    });
  } catch (err) {
    // The parser is recursive: absurd nesting can overflow the stack before any error is recorded.
    if (err instanceof RangeError) throw new LocatedError({ pos: at(0), message: 'the YAML is nested too deeply to be read' });
    throw err;
  }
  if (doc.errors.length > 0) {
    throw new LocatedError(doc.errors.map((e): Problem => ({ pos: at(e.pos[0]), message: describeYamlError(e.code, e.message) })));
  }
  const builder = new Builder(doc, sources, at, maxNodes, maxDepth);
  const value = builder.build(doc.contents, 0);
  if (builder.problems.length > 0) throw new LocatedError(builder.problems);
  return { file, value, sources };
}

/** The yaml package's message without its own position suffix (we print FILE:LINE:COL first). */
function describeYamlError(code: string, message: string): string {
  if (code === 'MULTIPLE_DOCS') return 'invalid YAML: the file holds several documents (---); it must hold one';
  if (/call stack/i.test(message)) return 'the YAML is nested too deeply to be read';
  const first = message
    .split('\n')[0]!
    .replace(/ at line \d+, column \d+:?$/, '')
    .trim();
  return `invalid YAML: ${first.charAt(0).toLowerCase()}${first.slice(1)}`;
}

class Builder {
  readonly problems: Problem[] = [];
  private nodes = 0;
  /** Alias targets being expanded right now: seeing one again means an alias refers to itself. */
  private readonly expanding = new Set<Node>();
  /** Anchored nodes by anchor name, in document order (an anchor may be defined again later). */
  private anchors: Map<string, { start: number; node: Node }[]> | undefined;

  constructor(
    private readonly doc: Document.Parsed,
    private readonly sources: SourceMap,
    private readonly at: (offset: number) => SourcePos,
    private readonly maxNodes: number,
    private readonly maxDepth: number,
  ) {}

  /**
   * The node an alias refers to: the last node anchored with its name before it. (The yaml
   * package's Alias.resolve walks the whole document for every alias, which makes a file with
   * hundreds of `<<: *common` quadratic; the anchors are indexed once here instead.)
   */
  private resolve(alias: Alias): Node | undefined {
    if (!this.anchors) {
      const anchors = new Map<string, { start: number; node: Node }[]>();
      visit(this.doc, {
        Node: (_key, node) => {
          const anchor = (node as { anchor?: string }).anchor;
          if (anchor && !isAlias(node)) {
            const list = anchors.get(anchor) ?? [];
            list.push({ start: node.range?.[0] ?? 0, node });
            anchors.set(anchor, list);
          }
        },
      });
      this.anchors = anchors;
    }
    const at = alias.range?.[0] ?? Infinity;
    let found: Node | undefined;
    for (const a of this.anchors.get(alias.source) ?? []) if (a.start < at) found = a.node;
    return found;
  }

  private posOf(node: Node | null | undefined, fallback: SourcePos): SourcePos {
    const start = node?.range?.[0];
    return start === undefined ? fallback : this.at(start);
  }

  private fail(pos: SourcePos, message: string): null {
    if (this.problems.length < 20) this.problems.push({ pos, message });
    return null;
  }

  build(node: unknown, depth: number): unknown {
    if (node === null || node === undefined) return null;
    if (this.problems.length > 0) return null;
    const pos = this.posOf(node as Node, this.sources.fallback);
    if (++this.nodes > this.maxNodes) return this.fail(pos, `the document expands to more than ${this.maxNodes} values (aliases repeated too often?)`);
    if (depth > this.maxDepth) return this.fail(pos, `the document is nested more than ${this.maxDepth} levels deep`);
    if (isScalar(node)) {
      const v = node.value;
      if (typeof v === 'symbol') return this.fail(pos, 'a merge key (<<) is only allowed as a map key');
      if (typeof v === 'bigint') return Number(v);
      return v ?? null;
    }
    if (isAlias(node)) {
      const target = this.resolve(node);
      if (!target) return this.fail(pos, `unknown alias *${node.source}`);
      if (this.expanding.has(target)) return this.fail(pos, `alias *${node.source} refers to itself`);
      this.expanding.add(target);
      try {
        return this.build(target, depth + 1);
      } finally {
        this.expanding.delete(target);
      }
    }
    if (isSeq(node)) {
      const out: unknown[] = [];
      this.sources.setContainer(out, pos);
      for (const item of node.items) {
        const index = out.length;
        out.push(this.build(item, depth + 1));
        this.sources.setEntry(out, index, { value: this.posOf(item as Node, pos) });
      }
      return out;
    }
    if (isMap(node)) {
      const out: Record<string, unknown> = {};
      this.sources.setContainer(out, pos);
      this.fillMap(out, node, depth, pos, false);
      return out;
    }
    return this.fail(pos, 'unsupported YAML node');
  }

  /**
   * Adds the pairs of `map` to `out`. Merged maps (`<<`) never override a key the map sets itself,
   * wherever the `<<` is written, and earlier merge sources win over later ones (YAML 1.1 merge).
   */
  private fillMap(out: Record<string, unknown>, map: YAMLMap, depth: number, pos: SourcePos, merging: boolean): void {
    const merges: unknown[] = [];
    for (const pair of map.items) {
      if (!isPair(pair)) continue;
      const keyNode = pair.key as Node | null;
      const keyPos = this.posOf(keyNode, pos);
      if (isScalar(keyNode) && typeof keyNode.value === 'symbol') {
        merges.push(pair.value);
        continue;
      }
      const key = this.keyOf(keyNode, keyPos, depth);
      if (key === undefined) continue;
      if (Object.hasOwn(out, key)) {
        if (merging) continue;
        this.fail(keyPos, 'invalid YAML: map keys must be unique');
        continue;
      }
      const value = this.build(pair.value, depth + 1);
      define(out, key, value);
      this.sources.setEntry(out, key, { key: keyPos, value: this.posOf(pair.value as Node | null, keyPos) });
    }
    for (const source of merges) this.merge(out, source, depth, pos);
  }

  private merge(out: Record<string, unknown>, source: unknown, depth: number, pos: SourcePos): void {
    const node = source as Node | null;
    const sourcePos = this.posOf(node, pos);
    if (isAlias(node)) {
      const target = this.resolve(node);
      if (!target) {
        this.fail(sourcePos, `unknown alias *${node.source}`);
        return;
      }
      if (this.expanding.has(target)) {
        this.fail(sourcePos, `alias *${node.source} refers to itself`);
        return;
      }
      if (isSeq(target)) {
        this.fail(sourcePos, 'a merge key (<<) takes a map, an alias of a map, or a list of those');
        return;
      }
      this.expanding.add(target);
      try {
        this.merge(out, target, depth + 1, pos);
      } finally {
        this.expanding.delete(target);
      }
      return;
    }
    if (isSeq(node) && !isMergeList(source)) {
      this.fail(sourcePos, 'a merge key (<<) takes a map, an alias of a map, or a list of those');
      return;
    }
    if (isSeq(node)) {
      for (const item of node.items) this.merge(out, item, depth + 1, pos);
      return;
    }
    if (isMap(node)) {
      if (++this.nodes > this.maxNodes) {
        this.fail(sourcePos, `the document expands to more than ${this.maxNodes} values (aliases repeated too often?)`);
        return;
      }
      this.fillMap(out, node, depth, pos, true);
      return;
    }
    this.fail(sourcePos, 'a merge key (<<) takes a map, an alias of a map, or a list of those');
  }

  private keyOf(keyNode: Node | null, keyPos: SourcePos, depth: number): string | undefined {
    if (keyNode === null || keyNode === undefined) return '';
    if (isScalar(keyNode)) {
      const v = keyNode.value;
      return v === null || v === undefined ? '' : String(v);
    }
    if (isAlias(keyNode)) {
      const v = this.build(keyNode, depth + 1);
      if (v === null || typeof v !== 'object') return v === null ? '' : String(v);
    }
    this.fail(keyPos, 'a map key must be a plain value, not a list or a map');
    return undefined;
  }
}

/** A list under `<<` must hold maps or aliases; a list of scalars is an error, not a merge. */
function isMergeList(node: unknown): boolean {
  return isSeq(node) && node.items.every((i) => isMap(i) || isAlias(i));
}

/** Sets a key even when it is "__proto__": plain assignment would change the object's prototype. */
export function define(obj: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(obj, key, { value, writable: true, enumerable: true, configurable: true });
  else obj[key] = value;
}
