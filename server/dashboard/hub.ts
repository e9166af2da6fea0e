/**
 * The live updates' hub: one watch per namespace and kind, whatever the number of open pages, fanned
 * out to every page of that namespace, and closed when the last page goes.
 *
 * Rights: the shared watch acts as the namespace's owner (the service itself may not read pods);
 * every subscriber is first allowed by SelfSubjectAccessReviews made with its own user's token
 * (list and watch of each kind it asks for, in that namespace), and again every `recheckMs`: a user
 * whose rights went is cut off, and never receives anything of a namespace it cannot read.
 *
 * Memory per subscriber is bounded: the hub keeps one summary per object per watch, not per page,
 * and tells a page only *which* kind changed; a page that cannot keep up (its `changed` answers
 * false) is dropped, never buffered for.
 *
 * A watch that fails for good (WatchSink.fail) ends every page on it with the reason and is
 * forgotten: nothing retries it until a page subscribes again.
 */
import { KINDS, type Kind, SUMMARIZE, type Summary } from './model.ts';

/** What a watch reports: the whole list (first, and after every relist), then changes. */
export interface WatchSink {
  reset(objects: readonly unknown[]): void;
  put(object: unknown): void;
  remove(object: unknown): void;
  /** The watch gave up for good (its owner's account is gone, or the owner may not read there any more); it calls nothing more. */
  fail(reason: string): void;
}

/** The cluster as the hub needs it (kube-cluster.ts; an in-memory fake in the unit tests). */
export interface HubCluster {
  /** Lists, then watches `kind` in `namespace` acting as `owner`, re-listing after any break, until the answer is called. */
  watch(owner: string, namespace: string, kind: Kind, sink: WatchSink): () => void;
  /** SelfSubjectAccessReviews made with `user`'s own token: may it list and watch `kind` in `namespace`? */
  mayWatch(user: string, namespace: string, kind: Kind): Promise<boolean>;
}

/** A page's end of a subscription. */
export interface Subscriber {
  /** `kind` changed, or its first list arrived; false when the page is too slow to be told more. */
  changed(kind: Kind): boolean;
  /** The hub ended the subscription (rights gone, too slow); nothing more comes. */
  end(reason: string): void;
}

export interface Subscription {
  close(): void;
}

interface Watched {
  stop: () => void;
  /** The summaries by object name; undefined before the first list. */
  items: Map<string, unknown> | undefined;
  subscribers: Set<Subscriber>;
  /** Why it gave up for good (WatchSink.fail); it serves nobody more. */
  failed?: string;
}

export interface HubOptions {
  /** The owner of a namespace devtool manages; undefined: not one of devtool's. */
  ownerOf(namespace: string): Promise<string | undefined>;
  /** How often a subscriber's rights are asked again. */
  recheckMs: number;
}

/** Why a watch acting as `owner` gives up: its account is gone (kube-cluster.ts). */
export const ownerGone = (owner: string) => `the namespace's owner ${owner} has no account any more`;
/** What a page is told when it is dropped for holding more than it can be sent. */
export const FELL_BEHIND = 'this page fell behind the live updates: reload it';
/** What a page is told when its watch gave up for `reason`. */
export const stoppedLine = (reason: string) => `live updates stopped: ${reason}`;

const keyOf = (namespace: string, kind: Kind) => `${namespace}/${kind}`;
const nameOf = (o: unknown) => (o as { metadata?: { name?: string } }).metadata?.name ?? '';

export class WatchHub {
  private readonly watched = new Map<string, Watched>();

  constructor(
    private readonly cluster: HubCluster,
    private readonly opts: HubOptions,
  ) {}

  /** Whether `user` may watch every one of `kinds` in `namespace` (each asked with its own token); throws when a review fails. */
  async allowed(user: string, namespace: string, kinds: readonly Kind[] = KINDS): Promise<boolean> {
    const answers = await Promise.all(kinds.map((k) => this.cluster.mayWatch(user, namespace, k)));
    return answers.every(Boolean);
  }

  /**
   * Subscribes `subscriber` to `kinds` of `namespace` for `user`: 'forbidden' (nothing opened) when
   * the namespace is not devtool's or the user may not watch one of the kinds.
   */
  async subscribe(user: string, namespace: string, kinds: readonly Kind[], subscriber: Subscriber): Promise<Subscription | 'forbidden'> {
    const owner = await this.opts.ownerOf(namespace);
    // A review that fails (the API server unreachable) refuses the page; it may try again.
    if (!owner || !(await this.allowed(user, namespace, kinds).catch(() => false))) return 'forbidden';
    let open = true;
    const close = (): void => {
      if (!open) return;
      open = false;
      clearInterval(recheck);
      for (const kind of kinds) this.leave(namespace, kind, subscriber);
    };
    const recheck = setInterval(() => {
      // A review that fails says nothing about the rights: the page stays until a review says no.
      void this.allowed(user, namespace, kinds).then(
        (still) => {
          if (still || !open) return;
          close();
          subscriber.end('your rights in this namespace changed');
        },
        () => undefined,
      );
    }, this.opts.recheckMs);
    recheck.unref();
    this.closers.set(subscriber, close);
    for (const kind of kinds) {
      const w = this.join(owner, namespace, kind, subscriber);
      if (w.failed && open) {
        close();
        subscriber.end(stoppedLine(w.failed));
      } else if (w.items && open && !subscriber.changed(kind)) this.drop(subscriber, close);
    }
    return { close };
  }

  /** The current summaries of a watched kind; undefined before its first list. */
  items<K extends Kind>(namespace: string, kind: K): Summary<K>[] | undefined {
    const items = this.watched.get(keyOf(namespace, kind))?.items;
    return items ? ([...items.values()] as Summary<K>[]) : undefined;
  }

  /** How many watches are open and how many subscriptions they serve (metrics, tests). */
  stats(): { watches: number; subscribers: number } {
    let subscribers = 0;
    for (const w of this.watched.values()) subscribers += w.subscribers.size;
    return { watches: this.watched.size, subscribers };
  }

  private readonly closers = new WeakMap<Subscriber, () => void>();

  private join(owner: string, namespace: string, kind: Kind, subscriber: Subscriber): Watched {
    const key = keyOf(namespace, kind);
    let w = this.watched.get(key);
    if (!w) {
      // Summaries only: the hub keeps what the pages show, not whole objects (a pod's spec, a ConfigMap's manifest).
      const summarize = SUMMARIZE[kind] as (o: unknown) => unknown;
      const made: Watched = { stop: () => undefined, items: undefined, subscribers: new Set() };
      let stopped = false;
      this.watched.set(key, made);
      const notify = () => {
        for (const s of [...made.subscribers]) if (!s.changed(kind)) this.drop(s, this.closers.get(s));
      };
      const stop = this.cluster.watch(owner, namespace, kind, {
        reset: (objects) => {
          made.items = new Map(objects.map((o) => [nameOf(o), summarize(o)]));
          notify();
        },
        put: (o) => {
          if (!made.items) return;
          made.items.set(nameOf(o), summarize(o));
          notify();
        },
        remove: (o) => {
          if (!made.items?.delete(nameOf(o))) return;
          notify();
        },
        fail: (reason) => {
          made.failed = reason;
          if (this.watched.get(key) === made) this.watched.delete(key);
          stopped = true;
          made.stop();
          for (const s of [...made.subscribers]) {
            this.closers.get(s)?.();
            s.end(stoppedLine(reason));
          }
        },
      });
      made.stop = stop;
      if (stopped) stop(); // it failed before it answered
      w = made;
    }
    if (!w.failed) w.subscribers.add(subscriber);
    return w;
  }

  private leave(namespace: string, kind: Kind, subscriber: Subscriber): void {
    const key = keyOf(namespace, kind);
    const w = this.watched.get(key);
    if (!w) return;
    w.subscribers.delete(subscriber);
    if (w.subscribers.size === 0) {
      this.watched.delete(key);
      w.stop();
    }
  }

  private drop(subscriber: Subscriber, close: (() => void) | undefined): void {
    close?.();
    subscriber.end(FELL_BEHIND);
  }
}
