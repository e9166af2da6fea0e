import { UsageError } from '../cli/errors.ts';

/** `--var KEY=VALUE` flags to a map; a later flag wins. The value may contain '=' and be empty. */
export function parseVariables(flags: readonly string[], flag = '--var'): Record<string, string> {
  const out: Record<string, string> = {};
  for (const text of flags) {
    const eq = text.indexOf('=');
    const key = eq === -1 ? '' : text.slice(0, eq);
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(key)) {
      throw new UsageError(`invalid value "${text}" for flag ${flag}: expected KEY=VALUE with KEY a variable name`);
    }
    out[key] = text.slice(eq + 1);
  }
  return out;
}
