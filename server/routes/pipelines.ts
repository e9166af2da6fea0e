/**
 * Pipelines: start a deploy or destroy run, read a pipeline's last run, follow its output. Every
 * cluster call acts with the caller's own ServiceAccount token (server/pipelines/kube-cluster.ts),
 * so Kubernetes RBAC decides where a user may run one.
 */
import { PassThrough } from 'node:stream';
import { routes } from '../../api/routes.ts';
import { type Authenticator, userOf } from '../auth.ts';
import type { App, ServiceDeps } from '../service-deps.ts';
import { ApiError } from '../errors.ts';
import type { KubeCredentialSource } from '../kube-credentials.ts';
import { actingUser, type ClusterFactory } from '../pipelines/acting-user.ts';
import type { PipelineCluster } from '../pipelines/cluster.ts';
import { deploy, destroy, getRun, refresh, requireAccess } from '../pipelines/runs.ts';
import { requireRepository, routeOptions } from './route-options.ts';

/** Pipelines' cluster on Kubernetes, acting with a user's token (the dashboard's run pages use it too). */
export const defaultCluster: ClusterFactory<PipelineCluster> = async (token) => {
  const { kubeRunJobs, userKubeConfig } = await import('../pipelines/kube-cluster.ts');
  return kubeRunJobs(await userKubeConfig(token));
};

export function registerPipelineRoutes(
  app: App,
  ctx: ServiceDeps,
  auth: Authenticator,
  source: KubeCredentialSource | undefined,
  clusterFactory: ClusterFactory<PipelineCluster> = defaultCluster,
): void {
  const r = routes;

  /** The caller's view of the cluster, and what a run needs. */
  const forUser = actingUser(ctx, source, clusterFactory);
  /** A preview's runs start only through the preview routes (server/previews/), which decide who acts. */
  const refusePreview = async (namespace: string) => {
    if ((await ctx.store.getNamespace(namespace))?.preview) {
      throw new ApiError(403, `namespace ${namespace} is a preview environment: deploy or destroy it with devtool preview, not devtool pipeline`);
    }
  };

  const deployOptions = { ...routeOptions(r.deployPipeline, auth, { body: r.deployPipeline.body }), preValidation: requireRepository };
  app.post(r.deployPipeline.url, deployOptions, async (request, reply) => {
    await refusePreview(request.body.namespace);
    const { cluster, settings } = await forUser(userOf(request).name);
    return reply.code(202).send(await deploy(cluster, settings, request.body));
  });

  app.post(
    r.destroyPipeline.url,
    routeOptions(r.destroyPipeline, auth, { params: r.destroyPipeline.params, body: r.destroyPipeline.body }),
    async (request, reply) => {
      await refusePreview(request.params.namespace);
      const { cluster, settings } = await forUser(userOf(request).name);
      const { namespace, name } = request.params;
      return reply.code(202).send(await destroy(cluster, settings, namespace, name, request.body));
    },
  );

  app.get(r.getPipeline.url, routeOptions(r.getPipeline, auth, { params: r.getPipeline.params }), async (request) => {
    const { cluster } = await forUser(userOf(request).name);
    return await getRun(cluster, request.params.namespace, request.params.name, ctx.now());
  });

  // The runner's output as it comes (text/plain, chunked). A run that has ended answers its recorded
  // log. The client follows the status with getPipeline once the stream ends.
  app.get(
    r.pipelineLog.url,
    { ...routeOptions(r.pipelineLog, auth, { params: r.pipelineLog.params }), schema: { params: r.pipelineLog.params } },
    async (request, reply) => {
      const { cluster } = await forUser(userOf(request).name);
      const { namespace, name } = request.params;
      await requireAccess(cluster, namespace, name, 'read');
      const found = await refresh(cluster, namespace, name, ctx.now());
      if (!found) throw new ApiError(404, `no pipeline ${name} in namespace ${namespace}`);
      reply.header('content-type', 'text/plain; charset=utf-8').header('cache-control', 'no-store').header('x-accel-buffering', 'no');
      const running = found.record.status === 'progressing' || found.record.status === 'destroying';
      if (!running) return reply.send(found.record.log ?? '');
      const out = new PassThrough();
      const abort = new AbortController();
      request.raw.on('close', () => abort.abort());
      cluster.followLog(namespace, found.record.job, out, abort.signal).then(
        (followed) => {
          if (!followed) out.end();
        },
        (err: unknown) => {
          request.log.warn({ err }, 'following a pipeline log failed');
          out.end();
        },
      );
      return reply.send(out);
    },
  );
}
