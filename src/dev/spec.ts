/** Small helpers around the manifest's `services` entries (src/manifest/ owns their loading). */
import { DevtoolError } from '../base/errors.ts';

/** KEY=VALUE words of --env. */
export function parseEnvList(words: readonly string[], what = '--env'): Record<string, string> {
  const out: Record<string, string> = {};
  for (const w of words) {
    const eq = w.indexOf('=');
    if (eq <= 0) throw new DevtoolError(`${what}: "${w}" must be KEY=VALUE`);
    out[w.slice(0, eq)] = w.slice(eq + 1);
  }
  return out;
}
