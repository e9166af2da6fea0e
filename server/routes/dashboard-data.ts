/**
 * What the dashboard's pages show of a namespace record, for the viewer: its status text, its sleep
 * and what the viewer may do with it, a preview's facts, Home's row. The same for the first paint
 * and every live update, so an update never shows a namespace otherwise than a reload would.
 */
import type { NamespaceBody } from '../../api/routes.ts';
import type { HomeNamespace } from '../dashboard/home-page.ts';
import { when } from '../dashboard/model.ts';
import type { PreviewView } from '../dashboard/preview-view.ts';
import type { SleepView } from '../dashboard/sleep-view.ts';
import { mayChangeSleep, mayDelete } from '../namespaces/actions.ts';
import { lastActivityOf } from '../namespaces/idle.ts';
import { namespaceBody } from '../namespaces/view.ts';
import { mayDestroyPreview, mayRedeployPreview } from '../previews/previews.ts';
import { maySleepPreview } from '../previews/sleep.ts';
import type { ServiceDeps } from '../service-deps.ts';
import type { NamespaceRecord, UserRecord } from '../store/store.ts';

/** Active or Terminating, or its sleep as the API says it (namespaces/view.ts). */
export function statusText(n: NamespaceRecord): string {
  const sleep = namespaceBody(n, {}).sleep;
  if (n.status !== 'Active' || !sleep) return n.status;
  return `${sleep.state} since ${when(sleep.since)}${sleep.by ? ` (by ${sleep.by})` : ''}`;
}

/** A namespace's sleep for Home and its page: whether the viewer may put it to sleep or wake it, and the service's announcement. */
function sleepOf(user: UserRecord, n: NamespaceRecord, body: NamespaceBody): SleepView {
  return {
    ...(body.sleep ? { sleep: body.sleep.state } : {}),
    sleepable: mayChangeSleep(user, n) && !n.preview && n.status === 'Active',
    ...(body.sleepsAt ? { sleepsAt: body.sleepsAt } : {}),
    ...(body.deletesAt ? { deletesAt: body.deletesAt } : {}),
  };
}

/** A preview's scope, source and the buttons its rules allow `user`; undefined for a plain namespace. */
function previewOf(user: UserRecord, n: NamespaceRecord): PreviewView | undefined {
  const p = n.preview;
  if (!p) return undefined;
  return {
    scope: p.scope,
    ...(p.sourceUrl ? { sourceUrl: p.sourceUrl } : {}),
    sleeping: p.sleepingSince !== undefined,
    destroying: p.destroyRequestedAt !== undefined || n.status === 'Terminating',
    maySleep: maySleepPreview(user, n),
    mayRedeploy: mayRedeployPreview(user, n),
    mayDestroy: mayDestroyPreview(user, n),
  };
}

/** The head of a namespace's page: owner, status, sleep, a preview's facts and buttons. */
export function namespaceHead(ctx: ServiceDeps, user: UserRecord, n: NamespaceRecord) {
  const body = namespaceBody(n, ctx.config.namespaceIdle ?? {});
  return {
    owner: n.owner,
    status: statusText(n),
    ...sleepOf(user, n, body),
    ...(n.preview ? { preview: previewOf(user, n)! } : {}),
  };
}

/** Home's row of a namespace; `running` undefined when what runs in it could not be read. */
export function homeRow(ctx: ServiceDeps, user: UserRecord, n: NamespaceRecord, running: HomeNamespace['running']): HomeNamespace {
  const last = lastActivityOf(n);
  return {
    name: n.name,
    personal: n.personal,
    deletable: mayDelete(user, n) && !n.preview && n.status === 'Active',
    ...namespaceHead(ctx, user, n),
    ...(running ? { running } : {}),
    ...(last !== undefined ? { lastActivity: new Date(last).toISOString() } : {}),
  };
}
