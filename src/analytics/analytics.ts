/**
 * Usage analytics. Each command execution records one record per action (action name, timestamp,
 * CLI version, OS, an anonymous machine ID, the user ID when logged in to a devtool service, and an
 * action ID shared by all actions of the execution). Records are spooled in the home directory and
 * only ever sent to the current devtool service; nothing here waits on the network, and every
 * failure is swallowed into the log: analytics never fails or slows a command.
 *
 * Opt-out: `devtool analytics --disable` (persistent) or DEVTOOL_DISABLE_ANALYTICS=1 (one process).
 */
import { appendFileSync, existsSync, readFileSync, statSync } from 'node:fs';
import { platform, arch } from 'node:os';
import type { DevtoolHome } from '../home.ts';
import { writeFileAtomic } from '../io/atomic-file.ts';
import type { Logger } from '../log/logger.ts';

export interface AnalyticsRecord {
  action: string;
  timestamp: string;
  version: string;
  os: string;
  machineId: string;
  actionId: string;
  success: boolean;
  userId?: string;
}

interface Settings {
  enabled: boolean;
  machineId: string;
}

/** The spool keeps at most this many bytes; older records are dropped first. */
export const SPOOL_MAX_BYTES = 1024 * 1024;

/**
 * node:crypto costs more start-up time than the rest of `devtool version` together, so it is
 * loaded only to create the machine ID (once per home). The action ID only correlates the actions
 * of one execution: it needs to be unique, not secret, and Math.random gives that.
 */
function secureUUID(): string {
  return process.getBuiltinModule('node:crypto').randomUUID();
}

/** A version-4 UUID (random; not for secrets). */
export function correlationUUID(): string {
  const hex = Array.from({ length: 32 }, () => Math.floor(Math.random() * 16));
  hex[12] = 4;
  hex[16] = 8 + (hex[16]! & 3);
  const s = hex.map((d) => d.toString(16)).join('');
  return `${s.slice(0, 8)}-${s.slice(8, 12)}-${s.slice(12, 16)}-${s.slice(16, 20)}-${s.slice(20)}`;
}

export class Analytics {
  /** Shared by every action of this execution. */
  readonly actionId = correlationUUID();
  private settings: Settings | undefined;

  constructor(
    private readonly home: DevtoolHome,
    private readonly env: Readonly<NodeJS.ProcessEnv>,
    private readonly version: string,
    private readonly now: () => Date,
    private readonly log: Logger,
  ) {}

  /** False when disabled persistently or for this process. */
  isEnabled(): boolean {
    const flag = (this.env.DEVTOOL_DISABLE_ANALYTICS ?? '').toLowerCase();
    if (flag === '1' || flag === 'true' || flag === 'yes') return false;
    return this.load().enabled;
  }

  setEnabled(enabled: boolean): void {
    const s = this.load();
    this.settings = { ...s, enabled };
    writeFileAtomic(this.home.analyticsFile, `${JSON.stringify(this.settings, null, 2)}\n`, 0o600);
  }

  /** Appends one record to the spool, if analytics is enabled. Never throws. */
  track(action: string, success: boolean, userId?: string): void {
    try {
      if (!this.isEnabled()) return;
      const record: AnalyticsRecord = {
        action,
        timestamp: this.now().toISOString(),
        version: this.version,
        os: `${platform()}/${arch()}`,
        machineId: this.load().machineId,
        actionId: this.actionId,
        success,
        ...(userId ? { userId } : {}),
      };
      this.trimSpool();
      appendFileSync(this.home.analyticsSpool, `${JSON.stringify(record)}\n`, { mode: 0o600 });
    } catch (err) {
      this.log.fileOnly(`analytics: record not written: ${(err as Error).message}`);
    }
  }

  /** Records waiting in the spool (for the sender, and for tests). */
  spooled(): AnalyticsRecord[] {
    if (!existsSync(this.home.analyticsSpool)) return [];
    return readFileSync(this.home.analyticsSpool, 'utf8')
      .split('\n')
      .filter(Boolean)
      .flatMap((line) => {
        try {
          return [JSON.parse(line) as AnalyticsRecord];
        } catch {
          return [];
        }
      });
  }

  /** The settings, creating the anonymous machine ID on first use. */
  private load(): Settings {
    if (this.settings) return this.settings;
    const file = this.home.analyticsFile;
    let s: Partial<Settings> = {};
    if (existsSync(file)) {
      try {
        s = JSON.parse(readFileSync(file, 'utf8')) as Partial<Settings>;
      } catch {
        s = {};
      }
    }
    if (typeof s.machineId === 'string' && s.machineId && typeof s.enabled === 'boolean') {
      this.settings = s as Settings;
    } else {
      this.settings = { enabled: s.enabled ?? true, machineId: s.machineId || secureUUID() };
      writeFileAtomic(file, `${JSON.stringify(this.settings, null, 2)}\n`, 0o600);
    }
    return this.settings;
  }

  /** Keeps the spool bounded: past the limit, the older half is dropped. */
  private trimSpool(): void {
    const file = this.home.analyticsSpool;
    if (!existsSync(file) || statSync(file).size < SPOOL_MAX_BYTES) return;
    const lines = readFileSync(file, 'utf8').split('\n').filter(Boolean);
    writeFileAtomic(file, `${lines.slice(Math.floor(lines.length / 2)).join('\n')}\n`, 0o600);
  }
}
