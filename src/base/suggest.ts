/** "Did you mean ...?" for misspelt names: commands, flags, fields, values. Ground floor: imports nothing from src/. */

/** Edit distance (insertions, deletions, substitutions, and swaps of two neighbours). */
export function editDistance(a: string, b: string): number {
  if (a === b) return 0;
  const rows = a.length + 1;
  const cols = b.length + 1;
  const d: number[][] = Array.from({ length: rows }, (_, i) => Array.from({ length: cols }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i < rows; i++) {
    for (let j = 1; j < cols; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let v = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) v = Math.min(v, d[i - 2]![j - 2]! + 1);
      d[i]![j] = v;
    }
  }
  return d[a.length]![b.length]!;
}

/**
 * The closest candidate to `word` when it is a likely typo, case ignored: at most a third of the
 * word's length in edits (and at least one), or the word is the start of the candidate (an
 * abbreviation: "u" for "use"). The fewest edits win; ties go to the first candidate.
 */
export function suggest(word: string, candidates: Iterable<string>): string | undefined {
  if (word.length === 0 || word.length > 64) return undefined;
  const lower = word.toLowerCase();
  const limit = Math.max(1, Math.floor(word.length / 3));
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const c of candidates) {
    const candidate = c.toLowerCase();
    const abbreviation = candidate.startsWith(lower);
    if (!abbreviation && Math.abs(c.length - word.length) > limit) continue;
    const dist = editDistance(lower, candidate);
    if ((dist <= limit || abbreviation) && dist < bestDistance) {
      best = c;
      bestDistance = dist;
    }
  }
  return best;
}

/** ` (did you mean "image"?)` (with `prefix` before the name: `"--namespace"`), or nothing. */
export function didYouMean(word: string, candidates: Iterable<string>, prefix = ''): string {
  const s = suggest(word, candidates);
  return s === undefined ? '' : ` (did you mean ${JSON.stringify(prefix + s)}?)`;
}
