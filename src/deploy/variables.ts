import { UsageError } from '../base/errors.ts';

/**
 * `--var KEY=VALUE` flags to a map; a later flag wins. The value may contain '=' and be empty.
 * An error never repeats a value (it may be a password, and errors reach devtool.log): only the key.
 */
export function parseVariables(flags: readonly string[], flag = '--var'): Record<string, string> {
  const out: Record<string, string> = {};
  for (const text of flags) {
    const eq = text.indexOf('=');
    const key = eq === -1 ? '' : text.slice(0, eq);
    if (eq === -1) throw new UsageError(`invalid value for flag ${flag} (no "=" in it): expected KEY=VALUE with KEY a variable name`);
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(key)) {
      throw new UsageError(`invalid value "${key}=..." for flag ${flag}: expected KEY=VALUE with KEY a variable name`);
    }
    out[key] = text.slice(eq + 1);
  }
  return out;
}
