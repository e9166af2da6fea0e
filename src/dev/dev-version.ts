/**
 * What `up` does with a dev container an earlier or later devtool started, told by the version
 * recorded on its dev Deployment (DEV_VERSION_ANNOTATION). The dev pod runs the agent of the
 * version that made it, and this CLI drives only its own version's agent, so:
 * - the same version: `up` connects to the dev pod as it is;
 * - an older version (or one this CLI cannot read: a build of a checkout): `up` goes on, and its dev
 *   pod is replaced by one of this version (the version is part of the spec hash, mirror.ts); the
 *   volume, and so the synced files, stay;
 * - a newer version: `up` refuses before it changes anything, saying what to run; this CLI cannot
 *   know what that version's dev pod needs.
 * `down` restores any of them: what it reads (names.ts, on the original) is the same in every
 * version, and `status` asks only the Syncthings of the `up` running on this machine (sync/status.ts).
 */
import { isNewerVersion } from '../base/semver.ts';

/** The version of a dev Deployment that records none: devtool 0.1.0 did not record it. */
export const UNRECORDED_DEV_VERSION = '0.1.0';

export type DevVersionRule =
  | { kind: 'same' }
  /** `up` replaces the dev pod; `step` says so. */
  | { kind: 'replace'; step: string }
  /** `up` stops before any change; `error` is its one line. */
  | { kind: 'refuse'; error: string };

/**
 * The rule for an `up` of this CLI (`cliVersion`) on the dev container `devName` whose dev
 * Deployment records `recorded` (undefined: none recorded).
 */
export function devVersionRule(devName: string, recorded: string | undefined, cliVersion: string): DevVersionRule {
  const made = recorded ?? UNRECORDED_DEV_VERSION;
  if (made === cliVersion) return { kind: 'same' };
  if (isNewerVersion(made, cliVersion)) {
    return {
      kind: 'refuse',
      error:
        `dev container ${devName} was started by devtool ${made}, newer than this CLI (${cliVersion}): install devtool ${made} to go on with it, ` +
        `or run 'devtool down ${devName}' and then 'devtool up ${devName}' to start it again with this one`,
    };
  }
  return {
    kind: 'replace',
    step: `dev container ${devName} was started by devtool ${made}: its pod is replaced by one of devtool ${cliVersion} (its volume and synced files stay)`,
  };
}
