/**
 * Kubernetes resource quantities ("250m", "1.5Gi", "1e3") as numbers in the resource's base unit
 * (cores, bytes, counts), for comparing and adding them as the API server's quota and limit range
 * admission do. Pure. A double holds every quantity a namespace meets exactly enough: a mebibyte
 * count or a millicore count is far below 2^53.
 */

const SUFFIXES: Record<string, number> = {
  n: 1e-9,
  u: 1e-6,
  m: 1e-3,
  '': 1,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  P: 1e15,
  E: 1e18,
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
  Pi: 2 ** 50,
  Ei: 2 ** 60,
};

const QUANTITY = /^([+-]?(?:\d+(?:\.\d*)?|\.\d+))(?:([eE][+-]?\d+)|(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE])?)$/;

/** The quantity's value in base units; undefined for text that is not a quantity. */
export function parseQuantity(text: string | number | undefined): number | undefined {
  if (text === undefined) return undefined;
  if (typeof text === 'number') return text;
  const m = QUANTITY.exec(text.trim());
  if (!m) return undefined;
  const base = Number(m[1]);
  if (m[2]) return Number(`${m[1]}${m[2]}`);
  return base * SUFFIXES[m[3] ?? '']!;
}

/** Whether `a` exceeds `b`, allowing for the rounding of decimal fractions ("0.1" + "0.2"). */
export function exceeds(a: number, b: number): boolean {
  return a - b > Math.max(Math.abs(a), Math.abs(b)) * 1e-12;
}

/**
 * A value in words for a one-line message: CPU in cores or millicores, bytes in the largest binary
 * unit that divides them (else decimal), counts as they are.
 */
export function formatQuantity(resource: string, value: number): string {
  if (/(^|\.)cpu$/.test(resource)) {
    const milli = Math.round(value * 1000);
    return milli % 1000 === 0 ? String(milli / 1000) : `${milli}m`;
  }
  if (/memory$|storage$/.test(resource)) {
    const bytes = Math.round(value);
    for (const suffix of ['Ei', 'Pi', 'Ti', 'Gi', 'Mi', 'Ki'] as const) {
      const size = SUFFIXES[suffix]!;
      if (bytes >= size && bytes % size === 0) return `${bytes / size}${suffix}`;
    }
    return String(bytes);
  }
  return String(Math.round(value * 1000) / 1000);
}
