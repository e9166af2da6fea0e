/**
 * The reconcile loop: whenever the watched Ingresses, Services or Namespaces change, translate what the watches
 * hold and push the result to Caddy. Changes arriving together are pushed once (a short delay); a
 * failed push is retried; and the configuration is pushed again periodically, so a restarted Caddy
 * (which boots with only its admin API) gets it back. Caddy ignores a configuration equal to the one
 * it runs, so the periodic push costs nothing when nothing changed.
 */
import type { V1Ingress, V1Namespace, V1Service } from '@kubernetes/client-node';
import { restingNamespaces } from './sleeping.ts';
import { type CaddyConfig, type FrontDoorSettings, type NotServed, translate } from './translate.ts';

export interface ClusterView {
  ingresses(): readonly V1Ingress[];
  services(): readonly V1Service[];
  /** Which namespaces sleep or wake (their hosts go to the waking page); absent: none. */
  namespaces?(): readonly V1Namespace[];
}

export interface ReconcilerDeps {
  view: ClusterView;
  settings: FrontDoorSettings;
  push(config: CaddyConfig): Promise<void>;
  log(line: string): void;
  /** What newly stopped being served (or never was), once each: the owners of those Ingresses learn why. */
  notServed?(problems: readonly NotServed[]): Promise<void>;
  /** After each successful push: the Ingresses served (their status shows our address). */
  publish?(served: readonly string[]): Promise<void>;
  /** After the first successful push (the readiness signal). */
  onLoaded?(): void;
  debounceMs?: number;
  retryMs?: number;
  resyncMs?: number;
}

export class Reconciler {
  private timer: NodeJS.Timeout | undefined;
  private running = false;
  private again = false;
  private lastProblems = new Set<string>();
  private lastHosts = '';
  private lastResting = '';
  private loaded = false;
  private resync: NodeJS.Timeout | undefined;

  constructor(private readonly d: ReconcilerDeps) {}

  start(): void {
    this.resync = setInterval(() => this.changed(), this.d.resyncMs ?? 10_000);
    this.changed();
  }

  stop(): void {
    clearInterval(this.resync);
    clearTimeout(this.timer);
  }

  /** Something changed: reconcile soon (several changes in a row make one push). */
  changed(delayMs = this.d.debounceMs ?? 200): void {
    if (this.running) {
      this.again = true;
      return;
    }
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.reconcile(), delayMs);
  }

  /** One pass; resolves when done (tests await it). */
  async reconcile(): Promise<void> {
    this.running = true;
    this.again = false;
    const resting = restingNamespaces(this.d.view.namespaces?.() ?? []);
    const t = translate(this.d.view.ingresses(), this.d.view.services(), this.d.settings, resting);
    const line = (p: NotServed) => `${p.ingress}: ${p.why}`;
    const fresh = t.problems.filter((p) => !this.lastProblems.has(line(p)));
    for (const p of fresh) this.d.log(`not served: ${line(p)}`);
    this.lastProblems = new Set(t.problems.map(line));
    if (fresh.length) await this.d.notServed?.(fresh).catch((e: Error) => this.d.log(`recording why Ingresses are not served failed: ${e.message}`));
    try {
      await this.d.push(t.config);
      const hosts = t.hosts.join(' ');
      if (hosts !== this.lastHosts) this.d.log(`serving ${t.hosts.length} host(s): ${hosts || '(none)'}`);
      this.lastHosts = hosts;
      const rest = [...resting]
        .map(([ns, r]) => `${ns} (${r})`)
        .sort()
        .join(', ');
      if (rest !== this.lastResting) this.d.log(`sending to the waking page the hosts of: ${rest || '(no namespace)'}`);
      this.lastResting = rest;
      if (!this.loaded) {
        this.loaded = true;
        this.d.onLoaded?.();
      }
      // A failed status update is logged and tried again with the next pass (at the latest the resync).
      await this.d.publish?.(t.served).catch((e: Error) => this.d.log(`updating Ingress status failed: ${e.message}`));
      this.running = false;
      if (this.again) this.changed();
    } catch (e) {
      this.d.log(`pushing the configuration to Caddy failed, retrying: ${(e as Error).message}`);
      this.running = false;
      this.changed(this.d.retryMs ?? 2_000);
    }
  }
}
