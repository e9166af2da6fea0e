/**
 * Whether one devtool version is newer than another (semver.org precedence, through the `semver`
 * package): the devtool service's version against this CLI's, a dev container's recorded version
 * against this CLI's. Only the two small functions are loaded, on the start-up path of every
 * command that talks to the service.
 */
import gt from 'semver/functions/gt.js';
import valid from 'semver/functions/valid.js';

/** Whether `candidate` is a semantic version (a leading `v` allowed) of higher precedence than `current`; false when either is not one. */
export function isNewerVersion(candidate: string, current: string): boolean {
  const a = valid(candidate.trim());
  const b = valid(current.trim());
  return a !== null && b !== null && gt(a, b);
}
