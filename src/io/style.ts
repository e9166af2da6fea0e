/**
 * Colour for the terminal: ANSI SGR codes around a piece of text, or the text as it is. Colour is
 * on only when the stream is a terminal, NO_COLOR is unset or empty (no-color.org) and TERM is not
 * `dumb`: a pipe, a file or a CI log gets plain text. The codes are written here rather than with
 * node:util's styleText, which Node 20 has only from 20.12 and which checks neither the stream nor
 * NO_COLOR before Node 22.13.
 */

export interface Style {
  /** A success mark (✓). */
  ok(text: string): string;
  /** A warning (!, `warn:`). */
  warn(text: string): string;
  /** A failure (✗, `Error:`). */
  error(text: string): string;
  /** What matters less: step marks, heartbeats. */
  dim(text: string): string;
}

export function colourWanted(stream: { isTTY?: boolean }, env: Readonly<NodeJS.ProcessEnv>): boolean {
  return Boolean(stream.isTTY) && !env.NO_COLOR && env.TERM !== 'dumb';
}

const sgr = (open: number, close: number) => (text: string) => `\u001b[${open}m${text}\u001b[${close}m`;
const plain = (text: string) => text;

export const COLOUR: Style = { ok: sgr(32, 39), warn: sgr(33, 39), error: sgr(31, 39), dim: sgr(2, 22) };
export const PLAIN: Style = { ok: plain, warn: plain, error: plain, dim: plain };

/** The style of text written to `stream`. */
export function styleFor(stream: { isTTY?: boolean }, env: Readonly<NodeJS.ProcessEnv>): Style {
  return colourWanted(stream, env) ? COLOUR : PLAIN;
}

/** A colour of the series below: the text wrapped in it, or as it is. */
export type Paint = (text: string) => string;

/**
 * Colours that tell several sources apart on one stream (the services of `logs`), given in turn:
 * the six plain ANSI hues but red (which reads as a failure), then their bright forms.
 */
export const SERIES: readonly Paint[] = [36, 33, 32, 35, 34, 96, 93, 92, 95, 94].map((code) => sgr(code, 39));

/** The series colours of text written to `stream`: one that paints nothing where colour is off. */
export function seriesFor(stream: { isTTY?: boolean }, env: Readonly<NodeJS.ProcessEnv>): readonly Paint[] {
  return colourWanted(stream, env) ? SERIES : [plain];
}
