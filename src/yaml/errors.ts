/**
 * Errors that point into a source file. Every problem a user can fix in a YAML file is reported as
 * FILE:LINE:COL so editors and terminals can jump to it, and in one line, like every devtool error.
 */
import { DevtoolError, ExitCode } from '../base/errors.ts';

/** A position in a source file; line and column count from 1. */
export interface SourcePos {
  readonly file: string;
  readonly line: number;
  readonly col: number;
}

/** A path into a parsed value: map keys and list indexes, e.g. ['services', 'web', 'ports', 0]. */
export type Path = readonly (string | number)[];

export interface Problem {
  readonly pos: SourcePos;
  /** The field the problem is about, as the user wrote it (omitted when the message names it). */
  readonly path?: Path;
  readonly message: string;
}

const plainKey = /^[A-Za-z0-9_-]+$/;

/** services.web.ports[0]; keys that are not plain words are quoted: labels["com.example.tier"]. */
export function formatPath(path: Path): string {
  let out = '';
  for (const part of path) {
    if (typeof part === 'number') out += `[${part}]`;
    else if (plainKey.test(part)) out += out === '' ? part : `.${part}`;
    else out += `[${JSON.stringify(part)}]`;
  }
  return out;
}

export function formatPos(pos: SourcePos): string {
  return `${pos.file}:${pos.line}:${pos.col}`;
}

/** One problem as one line: `FILE:LINE:COL: field PATH: message`. */
export function formatProblem(p: Problem): string {
  const field = p.path && p.path.length > 0 ? `field ${formatPath(p.path)}: ` : '';
  // A message must stay on one line: a YAML value quoted in it could carry a newline.
  return `${formatPos(p.pos)}: ${field}${p.message}`.replace(/\r?\n/g, '\\n');
}

/**
 * One or more problems found in source files. The message is the first problem (in file order),
 * so the CLI prints one clear line; `problems` keeps them all for callers that list every one.
 */
export class LocatedError extends DevtoolError {
  readonly problems: readonly Problem[];

  /** `files`: the order of the files (first file first); others follow in order of appearance. */
  constructor(problems: Problem | readonly Problem[], files: readonly string[] = []) {
    const list = sortProblems(Array.isArray(problems) ? problems : [problems as Problem], files);
    if (list.length === 0) throw new TypeError('LocatedError needs at least one problem');
    super(formatProblem(list[0]!), ExitCode.failure);
    this.problems = list;
  }

  /** Every problem, one line each. */
  lines(): string[] {
    return this.problems.map(formatProblem);
  }
}

/** Problems in file order, then line and column; duplicates (same place, same text) dropped. */
export function sortProblems(problems: readonly Problem[], files: readonly string[] = []): Problem[] {
  const seen = new Set<string>();
  const out: Problem[] = [];
  for (const p of problems) {
    const key = formatProblem(p);
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(p);
  }
  // Stable sort keeps the discovery order of problems at the same place. Files are not compared by
  // name: the caller's order (first file first), then the order they were met in, is meaningful.
  const fileOrder = new Map<string, number>(files.map((f, i) => [f, i]));
  for (const p of out) if (!fileOrder.has(p.pos.file)) fileOrder.set(p.pos.file, fileOrder.size);
  return out.sort((a, b) => fileOrder.get(a.pos.file)! - fileOrder.get(b.pos.file)! || a.pos.line - b.pos.line || a.pos.col - b.pos.col);
}

/** Collects problems while a pass goes on, then throws them all at once. */
export class ProblemList {
  readonly items: Problem[] = [];

  add(pos: SourcePos, message: string, path?: Path): void {
    this.items.push(path ? { pos, path, message } : { pos, message });
  }

  get empty(): boolean {
    return this.items.length === 0;
  }

  throwIfAny(): void {
    if (this.items.length > 0) throw new LocatedError(this.items);
  }
}
