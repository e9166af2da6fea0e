/**
 * The values of a list option of assignments (`of: 'assignments'` in spec.ts: --var, --env), each
 * KEY=VALUE, as the map a handler reads. KEY is a variable name; VALUE is everything after the
 * first '=', so it may hold '=' and be empty; a later flag wins over an earlier one of the same KEY.
 *
 * A value may be a password, and an error reaches the terminal, CI logs and devtool.log: the one
 * usage error names the flag and the KEY, never the VALUE, and shows nothing of a word without '='
 * (which may be a value whose KEY was forgotten).
 */
import { UsageError } from '../base/errors.ts';

/** A variable name (shell, Compose, the container's environment): a letter or '_', then letters, digits and '_'. */
export const VARIABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const VARIABLE_NAME_RULE = 'a letter or _, then letters, digits or _';

/** `flag` as the user reads it (`--env`); `hint` ends the error, as the parser's other value errors. */
export function parseAssignments(words: readonly string[], flag: string, hint?: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const word of words) {
    const eq = word.indexOf('=');
    if (eq === -1) throw new UsageError(`invalid value "..." for flag ${flag}: expected KEY=VALUE, found no "="`, hint);
    const key = word.slice(0, eq);
    if (!VARIABLE_NAME.test(key)) {
      throw new UsageError(`invalid value "${key}=..." for flag ${flag}: expected KEY=VALUE with KEY a variable name (${VARIABLE_NAME_RULE})`, hint);
    }
    // A own property even for "__proto__", which plain assignment would take for the prototype.
    Object.defineProperty(out, key, { value: word.slice(eq + 1), enumerable: true, writable: true, configurable: true });
  }
  return out;
}

/** The map back as KEY=VALUE words, in its order (what the service's API takes for variables). */
export function assignmentWords(assignments: Readonly<Record<string, string>>): string[] {
  return Object.entries(assignments).map(([key, value]) => `${key}=${value}`);
}
