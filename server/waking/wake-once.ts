/**
 * One wake per namespace at a time: the many requests a sleeping application gets at once (a page
 * and its assets, several users, the page's own reloads) start one wake between them. A second
 * start while the first one runs joins it; once it has settled, the namespace's annotations say
 * what happens next (WAKING_SINCE: nothing more to start).
 */
export class WakeOnce {
  private readonly running = new Map<string, Promise<void>>();

  constructor(
    private readonly wake: (namespace: string) => Promise<void>,
    private readonly log: (namespace: string, err: unknown) => void,
  ) {}

  /** Starts waking `namespace` unless a wake of it is already running; resolves when that wake has. */
  start(namespace: string): Promise<void> {
    const running = this.running.get(namespace);
    if (running) return running;
    const wake = this.wake(namespace)
      .catch((err: unknown) => this.log(namespace, err))
      .finally(() => this.running.delete(namespace));
    this.running.set(namespace, wake);
    return wake;
  }

  isRunning(namespace: string): boolean {
    return this.running.has(namespace);
  }
}
