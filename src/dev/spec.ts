/** Small helpers around the manifest's `services` entries (src/manifest/ owns their loading). */
import { UsageError } from '../base/errors.ts';

/** An environment variable name: a letter or '_', then letters, digits and '_'. */
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** KEY=VALUE words of --env: a bad one is a usage error (exit 2) naming the flag. */
export function parseEnvList(words: readonly string[], what = '--env'): Record<string, string> {
  const out: Record<string, string> = {};
  for (const w of words) {
    const eq = w.indexOf('=');
    if (eq <= 0) throw new UsageError(`invalid value "${w}" for flag ${what}: expected KEY=VALUE`);
    const key = w.slice(0, eq);
    if (!ENV_NAME.test(key)) {
      throw new UsageError(`invalid value "${w}" for flag ${what}: "${key}" is not a variable name (a letter or _, then letters, digits or _)`);
    }
    out[key] = w.slice(eq + 1);
  }
  return out;
}
