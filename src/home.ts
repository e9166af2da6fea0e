/**
 * The devtool home directory: `$DEVTOOL_HOME`, else `$HOME/.devtool`. Every piece of local state
 * lives here, under one of these names, so tests point DEVTOOL_HOME at a temporary folder.
 */
import { homedir } from 'node:os';
import { join } from 'node:path';

export class DevtoolHome {
  constructor(readonly root: string) {}

  static fromEnv(env: NodeJS.ProcessEnv): DevtoolHome {
    return new DevtoolHome(env.DEVTOOL_HOME || join(env.HOME || homedir(), '.devtool'));
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
