/**
 * Semantic versions (semver.org 2.0.0): parsing and precedence, for telling whether the devtool
 * service or a dev container's recorded version is newer or older than this CLI. No dependency:
 * the whole rule is a few lines, and it runs on the start-up path of every command that talks to
 * the service.
 */

export interface SemVer {
  major: number;
  minor: number;
  patch: number;
  /** The pre-release identifiers (`1.0.0-rc.1`: ['rc', '1']); empty for a release. */
  prerelease: readonly string[];
}

// MAJOR.MINOR.PATCH, numbers without leading zeros, an optional pre-release and build metadata.
const NUMBER = '0|[1-9]\\d*';
const IDENT = '(?:0|[1-9]\\d*|\\d*[A-Za-z-][0-9A-Za-z-]*)';
const PATTERN = new RegExp(`^v?(${NUMBER})\\.(${NUMBER})\\.(${NUMBER})(?:-(${IDENT}(?:\\.${IDENT})*))?(?:\\+[0-9A-Za-z-]+(?:\\.[0-9A-Za-z-]+)*)?$`);

/** The version in `text` (a leading `v` allowed), or undefined when it is not a semantic version. */
export function parseSemVer(text: string): SemVer | undefined {
  const m = PATTERN.exec(text.trim());
  if (!m) return undefined;
  return { major: Number(m[1]), minor: Number(m[2]), patch: Number(m[3]), prerelease: m[4] ? m[4].split('.') : [] };
}

/** Precedence (semver.org, item 11): negative when a < b, 0 when equal (build metadata ignored), positive when a > b. */
export function compareSemVer(a: SemVer, b: SemVer): number {
  for (const key of ['major', 'minor', 'patch'] as const) {
    if (a[key] !== b[key]) return a[key] - b[key];
  }
  // A release ranks above its pre-releases.
  if (a.prerelease.length === 0 || b.prerelease.length === 0) return b.prerelease.length - a.prerelease.length;
  const n = Math.min(a.prerelease.length, b.prerelease.length);
  for (let i = 0; i < n; i++) {
    const order = compareIdentifier(a.prerelease[i]!, b.prerelease[i]!);
    if (order !== 0) return order;
  }
  return a.prerelease.length - b.prerelease.length;
}

/** Whether `candidate` is a semantic version of higher precedence than `current`; false when either is not one. */
export function isNewerVersion(candidate: string, current: string): boolean {
  const a = parseSemVer(candidate);
  const b = parseSemVer(current);
  return a !== undefined && b !== undefined && compareSemVer(a, b) > 0;
}

/** Numeric identifiers compare as numbers and rank below alphanumeric ones, which compare in ASCII order. */
function compareIdentifier(a: string, b: string): number {
  const aNumeric = /^\d+$/.test(a);
  const bNumeric = /^\d+$/.test(b);
  if (aNumeric && bNumeric) return Number(a) - Number(b);
  if (aNumeric !== bNumeric) return aNumeric ? -1 : 1;
  return a < b ? -1 : a > b ? 1 : 0;
}
