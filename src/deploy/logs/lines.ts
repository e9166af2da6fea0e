/**
 * What `logs` prints, as pure pieces: a log stream's chunks cut into whole lines, the prefix that
 * says where a line comes from, one colour per service, and the checked --tail.
 */
import { StringDecoder } from 'node:string_decoder';
import { UsageError } from '../../base/errors.ts';
import type { Paint } from '../../io/style.ts';
import type { ContainerRun } from './pods.ts';

/**
 * Cuts a stream's chunks into lines. A chunk may end inside a line, or inside a character of
 * several bytes: what follows the last newline waits for the next chunk, or for the end.
 */
export class LineSplitter {
  private readonly decoder = new StringDecoder('utf8');
  private rest = '';

  /** The lines a chunk completes, without their line ends. */
  push(chunk: Buffer): string[] {
    const text = this.rest + this.decoder.write(chunk);
    const lines = text.split('\n');
    this.rest = lines.pop()!;
    return lines.map(withoutCarriageReturn);
  }

  /** At the end of the stream: its last line when it had no newline. */
  end(): string[] {
    const last = this.rest + this.decoder.end();
    this.rest = '';
    return last ? [withoutCarriageReturn(last)] : [];
  }
}

const withoutCarriageReturn = (line: string) => (line.endsWith('\r') ? line.slice(0, -1) : line);

/** `[service/pod]`, or `[service/pod/container]` for a pod of several containers. */
export function linePrefix(run: Pick<ContainerRun, 'service' | 'pod' | 'container' | 'several'>): string {
  return `[${run.service}/${run.pod}${run.several ? `/${run.container}` : ''}]`;
}

/** One colour per service, in the order services first appear, taken round the palette. */
export class ServiceColours {
  private readonly given = new Map<string, Paint>();
  constructor(private readonly palette: readonly Paint[]) {}

  of(service: string): Paint {
    let paint = this.given.get(service);
    if (!paint) {
      paint = this.palette[this.given.size % this.palette.length]!;
      this.given.set(service, paint);
    }
    return paint;
  }
}

/** --tail: lines per container, a whole number from 0; absent, every line. */
export function parseTail(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  if (!/^\d+$/.test(text.trim())) throw new UsageError(`invalid value "${text}" for flag --tail: expected a number of lines, 0 or more`);
  return Number(text.trim());
}

/** --since in whole seconds, as the API takes it (a part of a second counts as one); 0 or absent: from the start. */
export function sinceSeconds(ms: number | undefined): number | undefined {
  return ms ? Math.max(1, Math.ceil(ms / 1000)) : undefined;
}

const RFC3339 = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d{1,9}))?Z$/;

/** A line the API server timestamped (timestamps=true): its time, as written, and the text after it; a line without one is all text. */
export function timedLine(line: string): { time?: string; text: string } {
  const space = line.indexOf(' ');
  const time = space === -1 ? line : line.slice(0, space);
  if (!RFC3339.test(time)) return { text: line };
  return { time, text: space === -1 ? '' : line.slice(space + 1) };
}

/** Whether the log time `a` is later than `b` (UTC, as the kubelet writes them: fractions up to nanoseconds, trailing zeros dropped). */
export function isLater(a: string, b: string): boolean {
  return sortable(a) > sortable(b);
}

function sortable(time: string): string {
  const m = RFC3339.exec(time);
  return m ? `${m[1]}.${(m[2] ?? '').padEnd(9, '0')}` : time;
}
