/**
 * Failed sign-ins per account: after `max` wrong passwords for one user name within the window,
 * sign-in as that user is refused until the oldest failure leaves the window, whichever address the
 * guesses come from (the per-client rate limit stops one address, not many). The counts live in
 * this replica's memory: with N replicas an attacker gets at most N x max guesses per window and
 * account, and a restart forgets them. Names that are no account are counted alike, so a refusal
 * says nothing about which names exist.
 */
export class AccountLoginThrottle {
  private readonly failures = new Map<string, number[]>();

  constructor(
    private readonly limit: { max: number; timeWindowMs: number },
    private readonly now: () => Date,
    /** Accounts tracked at once: the oldest are forgotten first, so memory stays bounded. */
    private readonly maxTracked = 10_000,
  ) {}

  /** Seconds until `name` may try again, or 0 when it may now. */
  retryAfterSec(name: string): number {
    const recent = this.recent(name);
    if (recent.length < this.limit.max) return 0;
    return Math.max(1, Math.ceil((recent[recent.length - this.limit.max]! + this.limit.timeWindowMs - this.now().getTime()) / 1000));
  }

  failed(name: string): void {
    const recent = this.recent(name);
    recent.push(this.now().getTime());
    this.failures.delete(name);
    this.failures.set(name, recent.slice(-this.limit.max));
    while (this.failures.size > this.maxTracked) this.failures.delete(this.failures.keys().next().value!);
  }

  succeeded(name: string): void {
    this.failures.delete(name);
  }

  private recent(name: string): number[] {
    const since = this.now().getTime() - this.limit.timeWindowMs;
    return (this.failures.get(name) ?? []).filter((t) => t > since);
  }
}
