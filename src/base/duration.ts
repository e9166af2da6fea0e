/**
 * Go-style durations ("1s", "2m", "5m0s", "1h30m", "1.5h", "300ms"), as every peer tool written in Go
 * accepts them. A bare number is rejected: a duration always carries a unit.
 */
const unitMs: Record<string, number> = {
  ns: 1e-6,
  us: 1e-3,
  µs: 1e-3,
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
};

const part = /(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)/y;

/** Parses a duration into milliseconds, or returns undefined when it is not one. */
export function parseDuration(text: string): number | undefined {
  const s = text.trim();
  if (s === '0') return 0;
  if (s === '') return undefined;
  let total = 0;
  part.lastIndex = 0;
  while (part.lastIndex < s.length) {
    const m = part.exec(s);
    if (!m) return undefined;
    total += Number(m[1]) * unitMs[m[2]!]!;
  }
  return total;
}

/** Formats milliseconds the way Go prints a time.Duration (5m0s, 1h30m0s, 1.5s, 250ms). */
export function formatDuration(ms: number): string {
  if (ms === 0) return '0s';
  if (ms < 1000) return `${trim(ms)}ms`;
  const h = Math.floor(ms / 3_600_000);
  const m = Math.floor((ms % 3_600_000) / 60_000);
  const s = (ms % 60_000) / 1000;
  let out = '';
  if (h) out += `${h}h`;
  if (h || m) out += `${m}m`;
  return `${out}${trim(s)}s`;
}

function trim(n: number): string {
  return String(Math.round(n * 1000) / 1000);
}
