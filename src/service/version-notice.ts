/**
 * The notice that the devtool service runs a newer devtool than this CLI: one line naming the
 * version and the command that installs it, at most once a day per service URL. The service names
 * its version on every answer (SERVICE_VERSION_HEADER of api/schemas.ts), so the CLI learns it from
 * the calls a command makes anyway, without a request of its own; a command that makes none tells
 * nothing. When the line was last told, per service URL, is kept in the devtool home
 * (DevtoolHome.versionNoticeFile). Like gh's and npm's update notices, nothing here fails a
 * command: an unreadable stamp file counts as never told, an unwritable one is left as it is.
 */
import { readFileSync } from 'node:fs';
import { isNewerVersion } from '../base/semver.ts';
import { writeFileAtomic } from '../io/atomic-file.ts';

/** How long after telling a service's newer version the CLI is quiet about that service. */
export const NOTICE_INTERVAL_MS = 24 * 60 * 60 * 1000;

/** The machine as Node names it: the platform package the install command names. */
export interface NoticeMachine {
  platform: string;
  arch: string;
}

/** What telling needs: the CLI's version, the clock, where the stamps live, and where the line goes. */
export interface VersionNoticeEnv {
  cliVersion: string;
  now(): Date;
  /** The stamp file: `{ "<service URL>": "<when it was last told, ISO 8601>" }`. */
  stampFile: string;
  machine: NoticeMachine;
  tell(line: string): void;
}

/**
 * The line telling that the service at `url` runs `serviceVersion`, newer than `cliVersion`, or
 * undefined when it is not newer (or either is not a semantic version: a build from a checkout).
 * The install command is docs/releasing.md's, "Installing from the tarballs".
 */
export function newerVersionLine(url: string, serviceVersion: string, cliVersion: string, machine: NoticeMachine): string | undefined {
  if (!isNewerVersion(serviceVersion, cliVersion)) return undefined;
  const tarballs = `./devtool-${serviceVersion}.tgz ./devtool-${machine.platform}-${machine.arch}-${serviceVersion}.tgz`;
  return (
    `the devtool service at ${url} runs devtool ${serviceVersion}, this CLI is ${cliVersion}: ` +
    `install ${serviceVersion} from its release with npm install -g --offline --no-update-notifier ${tarballs}`
  );
}

/** Whether a notice last told at `lastTold` (undefined: never) may be told again at `now`. */
export function noticeDue(lastTold: Date | undefined, now: Date): boolean {
  if (lastTold === undefined || Number.isNaN(lastTold.getTime())) return true;
  // A clock set back past the stamp counts as due, or a wrong clock would silence the notice for good.
  const elapsed = now.getTime() - lastTold.getTime();
  return elapsed >= NOTICE_INTERVAL_MS || elapsed < 0;
}

/**
 * Tells, for each service URL a command heard a version from (`seen`: URL -> version), the newer
 * version when it is due, and stamps the URL. Returns the lines told.
 */
export function tellNewerVersions(env: VersionNoticeEnv, seen: ReadonlyMap<string, string>): string[] {
  const lines: { url: string; line: string }[] = [];
  for (const [url, version] of seen) {
    const line = newerVersionLine(url, version, env.cliVersion, env.machine);
    if (line) lines.push({ url, line });
  }
  if (lines.length === 0) return [];
  const stamps = readStamps(env.stampFile);
  const now = env.now();
  const due = lines.filter(({ url }) => noticeDue(stamps[url] === undefined ? undefined : new Date(stamps[url]), now));
  if (due.length === 0) return [];
  for (const { url } of due) stamps[url] = now.toISOString();
  try {
    writeFileAtomic(env.stampFile, `${JSON.stringify(stamps, null, 2)}\n`);
  } catch {
    // Told again next time: better than never.
  }
  for (const { line } of due) env.tell(line);
  return due.map(({ line }) => line);
}

/** The stamps, or none when the file is missing or not what this code writes. */
function readStamps(file: string): Record<string, string> {
  try {
    const value = JSON.parse(readFileSync(file, 'utf8')) as unknown;
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return {};
    return Object.fromEntries(Object.entries(value).filter((e): e is [string, string] => typeof e[1] === 'string'));
  } catch {
    return {};
  }
}
