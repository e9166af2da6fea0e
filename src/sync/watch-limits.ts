/**
 * inotify watch limits on both ends. Each watched folder costs one watch of the user's
 * `fs.inotify.max_user_watches`, and each end watches the tree twice: here our watcher and the
 * local Syncthing's, in the dev container the agent's rescanner and Syncthing's (an application's
 * own reloader, nodemon or webpack, comes on top and is not counted). Past the limit, changes are only found by the
 * periodic rescan: sync looks stalled for a minute with no error, the complaint users of peer tools
 * make most. So `up` counts the synchronized folders and says so at once when either limit is
 * too low, naming the setting and the fix.
 */
import { type Dirent, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { plainIgnores } from './watcher.ts';

export const LIMIT_FILE = '/proc/sys/fs/inotify/max_user_watches';
/** Watches each synchronized folder needs on one end (see above). */
const WATCHERS_PER_END = 2;
/** Counting stops here: the answer ("far too many") does not change, and a huge tree is not walked twice. */
const COUNT_CAP = 1_000_000;

/** Folders under `root` that watchers watch: not the plain names of its `.stignore`, not Syncthing's own. */
export function countWatchedFolders(root: string, cap = COUNT_CAP): number {
  const skip = plainIgnores(root);
  let count = 0;
  const stack = [root];
  while (stack.length > 0 && count < cap) {
    const dir = stack.pop()!;
    count++;
    let entries: Dirent[];
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      continue;
    }
    for (const e of entries) {
      // isDirectory() is false for symbolic links: they are not followed, as the watchers do not follow them.
      if (!e.isDirectory() || e.name === '.stversions' || skip.has(e.name) || (dir === root && skip.has(`/${e.name}`))) continue;
      stack.push(join(dir, e.name));
    }
  }
  return count;
}

/** The limit as the kernel states it ("8192\n"), or undefined when there is none to read (not Linux). */
export function parseLimit(text: string | undefined): number | undefined {
  const n = Number(text?.trim());
  return text !== undefined && Number.isInteger(n) && n > 0 ? n : undefined;
}

export function readLocalLimit(): number | undefined {
  try {
    return parseLimit(readFileSync(LIMIT_FILE, 'utf8'));
  } catch {
    return undefined;
  }
}

/** One line per end whose limit is too low for `folders` synchronized folders. */
export function watchLimitWarnings(folders: number, limits: { local?: number; remote?: number }): string[] {
  const needed = folders * WATCHERS_PER_END;
  const out: string[] = [];
  const advice = `changes there are only noticed by the periodic rescan; ignore big folders in .stignore (node_modules, build outputs), or raise the limit`;
  if (limits.local !== undefined && limits.local < needed) {
    out.push(
      `this machine's inotify limit (fs.inotify.max_user_watches = ${limits.local}) is too low for the ${folders} folders synchronized (about ` +
        `${needed} watches): ${advice}: sudo sysctl -w fs.inotify.max_user_watches=524288`,
    );
  }
  if (limits.remote !== undefined && limits.remote < needed) {
    out.push(
      `the dev container's inotify limit (fs.inotify.max_user_watches = ${limits.remote}, set on its node) is too low for the ${folders} folders ` +
        `synchronized (about ${needed} watches): ${advice} on the node (sysctl -w fs.inotify.max_user_watches=524288, e.g. from a privileged ` +
        `DaemonSet)`,
    );
  }
  return out;
}
