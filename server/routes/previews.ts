/**
 * Preview environments (server/previews/): deploy, list, read, destroy, endpoints, sleep, wake. Following a
 * run's output goes through the pipeline routes (the preview's pipeline, in its namespace).
 */
import { routes } from '../../api/routes.ts';
import { type Authenticator, userOf } from '../auth.ts';
import type { App, ServiceDeps, ServiceConfig } from '../service-deps.ts';
import { ApiError } from '../errors.ts';
import type { KubeCredentialSource } from '../kube-credentials.ts';
import { actingUser, type ClusterFactory } from '../pipelines/acting-user.ts';
import { deployPreview, destroyPreview, getPreview, listPreviews, type PreviewCluster, type PreviewDeps, previewEndpoints } from '../previews/previews.ts';
import { sleepPreview, wakePreview } from '../previews/sleep.ts';
import { reservedNamespaceReason } from '../reserved-namespaces.ts';
import { refusePersonalName, routeOptions } from './route-options.ts';

export const defaultPreviewCluster: ClusterFactory<PreviewCluster> = async (token) => {
  const [{ userKubeConfig }, { kubePreviewCluster }] = await Promise.all([import('../pipelines/kube-cluster.ts'), import('../previews/kube-cluster.ts')]);
  return kubePreviewCluster(await userKubeConfig(token));
};

/** What the preview handlers and the sweeper act with. */
export function previewDeps(ctx: ServiceDeps, source: KubeCredentialSource | undefined, clusterFactory = defaultPreviewCluster): PreviewDeps {
  return { store: ctx.store, actAs: actingUser(ctx, source, clusterFactory), now: ctx.now };
}

export function registerPreviewRoutes(app: App, auth: Authenticator, deps: PreviewDeps, config: ServiceConfig): void {
  const r = routes;
  const deploy = { ...routeOptions(r.deployPreview, auth, { body: r.deployPreview.body }), preValidation: refusePersonalName('preview environment') };
  app.post(r.deployPreview.url, deploy, async (request, reply) => {
    const reserved = reservedNamespaceReason(config, request.body.name);
    if (reserved) throw new ApiError(403, `preview environment ${request.body.name}: the name is reserved (${reserved}): choose another name`);
    return reply.code(202).send(await deployPreview(deps, userOf(request), request.body));
  });
  app.get(r.listPreviews.url, routeOptions(r.listPreviews, auth), async (request) => ({ previews: await listPreviews(deps, userOf(request)) }));
  app.get(r.getPreview.url, routeOptions(r.getPreview, auth, { params: r.getPreview.params }), async (request) => {
    return await getPreview(deps, userOf(request), request.params.name);
  });
  app.post(
    r.destroyPreview.url,
    routeOptions(r.destroyPreview, auth, { params: r.destroyPreview.params, body: r.destroyPreview.body }),
    async (request, reply) => reply.code(202).send(await destroyPreview(deps, userOf(request), request.params.name, request.body.timeoutSeconds)),
  );
  app.get(r.previewEndpoints.url, routeOptions(r.previewEndpoints, auth, { params: r.previewEndpoints.params }), async (request) => {
    return { endpoints: await previewEndpoints(deps, userOf(request), request.params.name) };
  });
  app.post(r.sleepPreview.url, routeOptions(r.sleepPreview, auth, { params: r.sleepPreview.params }), async (request) => {
    return await sleepPreview(deps, userOf(request), request.params.name);
  });
  app.post(r.wakePreview.url, routeOptions(r.wakePreview, auth, { params: r.wakePreview.params }), async (request) => {
    return await wakePreview(deps, userOf(request), request.params.name);
  });
}
