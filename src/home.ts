/**
 * The devtool home directory: `$DEVTOOL_HOME`, else `$HOME/.devtool`. Every piece of local state
 * lives here, under one of these names, so tests point DEVTOOL_HOME at a temporary folder.
 */
import { accessSync, constants, mkdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { DevtoolError } from './base/errors.ts';
import { userHome } from './base/platform.ts';

export class DevtoolHome {
  constructor(
    readonly root: string,
    /** Where root came from, for messages: DEVTOOL_HOME, or HOME when it is the default. */
    readonly source: 'DEVTOOL_HOME' | 'HOME' = 'DEVTOOL_HOME',
  ) {}

  static fromEnv(env: NodeJS.ProcessEnv): DevtoolHome {
    if (env.DEVTOOL_HOME) return new DevtoolHome(env.DEVTOOL_HOME);
    return new DevtoolHome(join(userHome(env), '.devtool'), 'HOME');
  }

  /**
   * Creates the home when it is missing and checks that it is a writable folder, or throws one
   * line naming it. Node's own recursive mkdir never returns on some impossible paths (/proc/x:
   * the parent exists, the child cannot be made, ENOENT), so folders are made one level at a time.
   */
  ensureUsable(): void {
    try {
      makeFolders(this.root);
      if (!statSync(this.root).isDirectory()) throw Object.assign(new Error('not a folder'), { code: 'ENOTDIR' });
      accessSync(this.root, constants.W_OK | constants.X_OK);
    } catch (err) {
      const e = err as NodeJS.ErrnoException;
      const why =
        e.code === 'ENOTDIR'
          ? 'not a folder'
          : e.code === 'ENOENT'
            ? 'it cannot be created'
            : e.code === 'EACCES' || e.code === 'EPERM' || e.code === 'EROFS'
              ? 'not writable'
              : (e.code ?? e.message);
      const where = this.source === 'HOME' ? `the devtool home ${this.root} (under HOME)` : `DEVTOOL_HOME ${this.root}`;
      throw new DevtoolError(`${where} cannot be used: ${why}; set DEVTOOL_HOME to a writable folder`);
    }
  }

  /** Contexts and their credentials (mode 0600). */
  get contextsFile(): string {
    return join(this.root, 'contexts.json');
  }
  get logFile(): string {
    return join(this.root, 'devtool.log');
  }
  /** Analytics settings: the opt-out and the anonymous machine ID. */
  get analyticsFile(): string {
    return join(this.root, 'analytics.json');
  }
  /** Analytics records waiting to be sent to the current devtool service. */
  get analyticsSpool(): string {
    return join(this.root, 'analytics-spool.jsonl');
  }
  /** When the CLI last told of a newer devtool on each service (service/version-notice.ts). */
  get versionNoticeFile(): string {
    return join(this.root, 'version-notice.json');
  }
  /** Shallow clones of the repositories of manifests' `dependencies`, kept to be updated by later deploys. */
  get dependenciesDir(): string {
    return join(this.root, 'dependencies');
  }
  /**
   * Doctor files. Not the current folder: that is usually a synced folder, and a zip of logs there
   * would be copied into the dev container (and the cluster's volume) by the file sync.
   */
  get doctorDir(): string {
    return join(this.root, 'doctor');
  }
  /** Per-dev-container state (sync config, pid files), keyed by a hash of folder and name. */
  devDir(key: string): string {
    return join(this.root, 'dev', key);
  }
}

/** mkdir -p that ends: each missing parent is made once, and a second failure is final. */
function makeFolders(path: string): void {
  try {
    mkdirSync(path, { mode: 0o700 });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') return;
    const parent = dirname(path);
    if (code !== 'ENOENT' || parent === path) throw err;
    makeFolders(parent);
    try {
      mkdirSync(path, { mode: 0o700 });
    } catch (again) {
      if ((again as NodeJS.ErrnoException).code !== 'EEXIST') throw again;
    }
  }
}
