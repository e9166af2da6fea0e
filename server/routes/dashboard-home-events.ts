/**
 * Home's live updates (HOME_EVENTS_PATH): server-sent events carrying Home's two lists, rendered as
 * the first paint is, whenever what the viewer sees of them changes.
 *
 * The namespaces come from the namespace hub (one watch of every namespace devtool manages), read
 * through `homeVisible`, the first paint's rule: the viewer's own namespaces and the global
 * previews, nothing of another user's private namespace. What runs in each (environments, pods
 * ready / total) comes from the watch hub, each namespace joined after the viewer's own access
 * reviews; one the viewer may not read, or whose watch stopped, shows "unknown" as on the first
 * paint. A list is sent only when its HTML changed.
 */
import { HOME_EVENTS_PATH, type HomeNamespace, type HomeSectionId, homeSections } from '../dashboard/home-page.ts';
import { FELL_BEHIND, type Subscription } from '../dashboard/hub.ts';
import { podCounts } from '../dashboard/model.ts';
import { homeVisible } from '../dashboard/namespace-hub.ts';
import { html, page } from '../pages/html.ts';
import type { App, ServiceDeps } from '../service-deps.ts';
import type { NamespaceRecord } from '../store/store.ts';
import type { DashboardDeps } from './dashboard-pages.ts';
import { homeRow } from './dashboard-data.ts';
import { openEventStream } from './dashboard-stream.ts';
import { csrfOf, signedInOf, viewerOf } from './dashboard-viewer.ts';
import { sendPage } from './login-pages.ts';

/** How long changes are gathered into one update. */
const GATHER_MS = 30;

/** What runs in one namespace of the page, as the watch hub serves it to this viewer. */
interface Running {
  state: 'joining' | 'live' | 'unknown';
  subscription?: Subscription;
}

export function registerHomeEvents(app: App, ctx: ServiceDeps, deps: DashboardDeps): void {
  app.get(HOME_EVENTS_PATH, async (request, reply) => {
    const v = await viewerOf(ctx, request, reply);
    if (!v) return reply;
    const namespaces = deps.namespaceHub;
    if (!namespaces) {
      const error = 'This devtool service cannot watch its namespaces: Home is not live.';
      return sendPage(reply, 503, page({ title: 'Home not live', ...signedInOf(v), error, body: html`<p><a href="/">Home</a></p>` }));
    }
    const user = v.user;
    const running = new Map<string, Running>();
    const sent = new Map<HomeSectionId, string>();
    let gathering: NodeJS.Timeout | undefined;
    const later = () => {
      if (!gathering && !stream.ended) gathering = setTimeout(flush, GATHER_MS);
    };

    /** Joins, in the watch hub, the namespaces shown whose running counts it may give; leaves the others. */
    const follow = (shown: readonly NamespaceRecord[]) => {
      const hub = deps.hub;
      const wanted = new Set(shown.filter((n) => n.status === 'Active').map((n) => n.name));
      for (const [name, r] of running) {
        if (wanted.has(name)) continue;
        r.subscription?.close();
        running.delete(name);
      }
      if (!hub) return;
      for (const name of wanted) {
        if (running.has(name)) continue;
        const r: Running = { state: 'joining' };
        running.set(name, r);
        const settle = (state: Running['state'], subscription?: Subscription) => {
          if (stream.ended || running.get(name) !== r) return subscription?.close();
          r.state = state;
          if (subscription) r.subscription = subscription;
          later();
        };
        const subscriber = {
          changed: () => {
            later();
            return !stream.behind();
          },
          // Its watch stopped (the owner's account gone) or the viewer's rights went: "unknown", the rest stays live.
          end: () => settle('unknown'),
        };
        hub.subscribe(user.name, name, ['environments', 'pods'], subscriber).then(
          (s) => (s === 'forbidden' ? settle('unknown') : r.state === 'joining' ? settle('live', s) : s.close()),
          () => settle('unknown'),
        );
      }
    };

    const runningOf = (n: NamespaceRecord): HomeNamespace['running'] | 'pending' => {
      const r = running.get(n.name);
      if (!r) return undefined;
      if (r.state === 'joining') return 'pending';
      if (r.state === 'unknown' || !deps.hub) return undefined;
      const envs = deps.hub.items(n.name, 'environments');
      const pods = deps.hub.items(n.name, 'pods');
      if (!envs || !pods) return 'pending';
      return { environments: envs.length, ...podCounts(pods) };
    };

    const flush = () => {
      gathering = undefined;
      const records = namespaces.records();
      if (stream.ended || !records) return;
      const visible = homeVisible(user.name, records);
      const shown = [...visible.own, ...visible.previews];
      follow(shown);
      const counts = new Map(shown.map((n) => [n.name, runningOf(n)]));
      // Not before every count is known: the page keeps its first paint's rather than flash "unknown".
      if ([...counts.values()].includes('pending')) return;
      const row = (n: NamespaceRecord) => homeRow(ctx, user, n, counts.get(n.name) as HomeNamespace['running']);
      const sections = homeSections({ namespaces: visible.own.map(row), previews: visible.previews.map(row), ...csrfOf(v) });
      for (const [id, section] of Object.entries(sections) as [HomeSectionId, { text: string }][]) {
        if (sent.get(id) === section.text) continue;
        sent.set(id, section.text);
        stream.send('section', { id, html: section.text });
      }
      if (stream.behind()) stream.end(FELL_BEHIND);
    };

    const stream = openEventStream(request, reply, v, () => {
      clearTimeout(gathering);
      listening?.close();
      for (const r of running.values()) r.subscription?.close();
      running.clear();
    });
    let listening: { close(): void } | undefined;
    listening = namespaces.subscribe({
      changed: () => {
        later();
        return !stream.behind();
      },
      end: (reason) => stream.end(reason),
    });
    return reply;
  });
}
