/**
 * The live updates' namespaces: one watch of every namespace devtool manages (the store's, with the
 * service's own right to list and watch Namespaces), whatever the number of open pages, opened with
 * the first page that needs it and closed after the last.
 *
 * Rights: the hub tells a page only *which* namespaces changed, never what they hold; each page
 * reads what its own user may see (Home: `homeVisible`, the rule of its first paint; a namespace
 * page: its own namespace, which its user was allowed into by the watch hub's access reviews).
 * A page that cannot keep up (its `changed` answers false) is dropped, never buffered for.
 */
import type { NamespaceRecord, NamespaceSink } from '../store/store.ts';
import { FELL_BEHIND } from './hub.ts';

/** Where the namespaces come from (Store.watchNamespaces; an in-memory fake in the unit tests). */
export interface NamespaceWatch {
  watchNamespaces(sink: NamespaceSink): () => void;
}

/** A page's end of the subscription. */
export interface NamespaceListener {
  /** These namespaces changed ('all': the whole list arrived); false when the page is too slow to be told more. */
  changed(names: readonly string[] | 'all'): boolean;
  /** The hub ended the subscription; nothing more comes. */
  end(reason: string): void;
}

/** What `user` sees on Home: the namespaces it owns, and the global previews of other users. */
export function homeVisible(user: string, records: Iterable<NamespaceRecord>): { own: NamespaceRecord[]; previews: NamespaceRecord[] } {
  const all = [...records].sort((a, b) => a.name.localeCompare(b.name));
  return {
    own: all.filter((n) => n.owner === user),
    previews: all.filter((n) => n.preview?.scope === 'global' && n.owner !== user),
  };
}

export class NamespaceHub {
  private items: Map<string, NamespaceRecord> | undefined;
  private readonly listeners = new Set<NamespaceListener>();
  private stop: (() => void) | undefined;

  constructor(
    private readonly source: NamespaceWatch,
    private readonly onError: (err: unknown) => void = () => undefined,
  ) {}

  /** Every namespace devtool manages; undefined before the first list. */
  records(): NamespaceRecord[] | undefined {
    return this.items && [...this.items.values()];
  }

  /** One namespace: undefined before the first list, null when there is no such namespace. */
  get(name: string): NamespaceRecord | null | undefined {
    return this.items && (this.items.get(name) ?? null);
  }

  /** Tells `listener` what changes from now on, and at once when the list is already there. */
  subscribe(listener: NamespaceListener): { close(): void } {
    this.listeners.add(listener);
    if (!this.stop) {
      const stop = this.source.watchNamespaces({
        reset: (records) => {
          this.items = new Map(records.map((r) => [r.name, r]));
          this.notify('all');
        },
        put: (record) => {
          if (!this.items) return;
          this.items.set(record.name, record);
          this.notify([record.name]);
        },
        remove: (name) => {
          if (!this.items?.delete(name)) return;
          this.notify([name]);
        },
        broke: (err) => this.onError(err),
      });
      // Its first list may come at once, and the only page may have been dropped then.
      if (this.listeners.size > 0) this.stop = stop;
      else {
        this.items = undefined;
        stop();
      }
    } else if (this.items && !listener.changed('all')) this.drop(listener);
    return { close: () => this.leave(listener) };
  }

  /** How many pages it serves and whether its watch is open (tests). */
  stats(): { watching: boolean; listeners: number } {
    return { watching: this.stop !== undefined, listeners: this.listeners.size };
  }

  private notify(names: readonly string[] | 'all'): void {
    for (const l of [...this.listeners]) if (!l.changed(names)) this.drop(l);
  }

  private drop(listener: NamespaceListener): void {
    this.leave(listener);
    listener.end(FELL_BEHIND);
  }

  private leave(listener: NamespaceListener): void {
    if (!this.listeners.delete(listener) || this.listeners.size > 0) return;
    const stop = this.stop;
    this.stop = undefined;
    this.items = undefined;
    stop?.();
  }
}
