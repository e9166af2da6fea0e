import { DockerCredentials } from '../../image/docker-config.ts';
import { buildSetup, type BuildSetup } from '../../image/select.ts';
import { DevtoolError } from '../../base/errors.ts';
import { interruptible } from '../../base/interrupt.ts';
import type { CommandHandler } from '../../cli/spec.ts';
import type { ResolvedContext } from '../../context/store.ts';
import { renderDryRun } from '../../deploy/dry-run.ts';
import { deployEnvironment, loadSource } from '../../deploy/environment-deploy.ts';
import { environmentName } from '../../app/name.ts';
import { Progress } from '../../deploy/progress.ts';
import { markInterrupted } from '../../deploy/state.ts';
import type { KubeClient } from '../../kube/client.ts';
import { objectsToYaml } from '../../kube/manifest-yaml.ts';
import { checkNamespaceName } from '../../kube/naming.ts';
import { type ClusterFlags, clusterTarget, endpointDomain, ingressClass } from '../../kube/target.ts';
import type { Factory } from '../../factory.ts';
import { wakeSleepingNamespace } from '../sleeping-namespace.ts';
import { deploySecrets } from '../stored-secrets.ts';
import type { deployOptions } from './spec.ts';

export const runDeploy: CommandHandler<typeof deployOptions> = async (f, inv) => {
  const variables = inv.opts.var;
  if (inv.opts.dryRun) return dryRun(f, inv.given.file, { context: inv.opts.context, namespace: inv.opts.namespace }, inv.opts.name, variables);
  const { context, namespace } = await clusterTarget(f, { context: inv.opts.context, namespace: inv.opts.namespace });
  // --var values are variables of the manifest and of Compose files too, above the shell's.
  const source = loadSource(f.cwd, inv.given.file, { ...f.env, ...variables });
  const domain = endpointDomain(f, context);
  const className = ingressClass(f, context);
  const environment =
    source.kind === 'manifest' ? environmentName(inv.opts.name ?? source.manifest.name, source.manifest.folder) : environmentName(inv.opts.name, source.folder);
  await wakeSleepingNamespace(f, context, namespace);
  const client = await f.kube({ context, namespace });
  const secrets = deploySecrets(f, context, 'values');
  const progress = new Progress(f.io.stderr, f.now, f.log, secrets.scrubText);
  const deploy = (signal: AbortSignal) =>
    deployEnvironment(
      {
        client,
        signal,
        namespace,
        contextName: context.name,
        ...(domain ? { endpointDomain: domain } : {}),
        ...(className ? { ingressClass: className } : {}),
        env: f.env,
        dependenciesDir: f.home.dependenciesDir,
        builds: buildSetup(context, f.env, f.cwd),
        progress,
        now: f.now,
        ...(secrets.stored ? { storedSecrets: secrets.stored } : {}),
      },
      { source, environment, variables, timeoutMs: inv.opts.timeout, wait: inv.opts.wait, build: inv.opts.build, forceDependencies: inv.opts.dependencies },
    );
  const { endpoints } = await interruptible(deploy, {
    graceMs: INTERRUPT_GRACE_MS,
    left: () => interruptedDeployLine(client, environment, namespace, f.now()),
  }).catch((err: unknown) => {
    throw secrets.scrub(err);
  });
  progress.done(`environment ${environment} deployed in namespace ${namespace}`);
  for (const url of endpoints) f.io.stdout.write(`${url}\n`);
};

/** How long an interrupted deploy has to stop its waits and commands and record itself. */
const INTERRUPT_GRACE_MS = 5_000;

/** What an interrupted deploy left, and the two ways on: deploy again, or destroy. */
async function interruptedDeployLine(client: KubeClient, environment: string, namespace: string, now: Date): Promise<string> {
  const record = await markInterrupted(client, environment, now).catch(() => undefined);
  if (record?.status !== 'interrupted') {
    return `nothing of environment ${environment} was applied in namespace ${namespace}${record ? ' (its last deploy stays as it was)' : ''}`;
  }
  return (
    `environment ${environment} in namespace ${namespace} is partly deployed (the lines above say what was applied) and recorded as interrupted; ` +
    `run 'devtool deploy' again to finish it, or 'devtool destroy' to remove it`
  );
}

/**
 * --dry-run renders offline: no cluster is contacted, so it works with no reachable cluster, and
 * with no context at all when --namespace is given. A context, when there is one, still gives the
 * namespace, the registry of built images, the endpoint domain and the ingress class. Objects go to stdout; the
 * warnings `deploy` would print go to stderr.
 */
async function dryRun(
  f: Factory,
  files: readonly string[] | undefined,
  flags: ClusterFlags,
  name: string | undefined,
  variables: Record<string, string>,
): Promise<void> {
  const env = { ...f.env, ...variables };
  const namespaceFlag = flags.namespace;
  let context: ResolvedContext | undefined;
  try {
    // A context named on the command line must exist; the current one may be missing or broken.
    context = flags.context !== undefined ? await f.contexts.select(flags.context) : await f.contexts.current();
  } catch (err) {
    // A broken context setting does not stop an offline rendering that names its namespace.
    if (namespaceFlag === undefined || flags.context !== undefined) throw err;
  }
  const namespace = namespaceFlag !== undefined ? checkNamespaceName(namespaceFlag) : context?.namespace;
  if (namespace === undefined) {
    throw new DevtoolError("no current context to take the namespace from: pass --namespace to render offline, or run 'devtool context use'");
  }
  const source = loadSource(f.cwd, files, env);
  const environment = source.kind === 'manifest' ? environmentName(name ?? source.manifest.name, source.manifest.folder) : environmentName(name, source.folder);
  const domain = context ? endpointDomain(f, context) : f.env.DEVTOOL_ENDPOINT_DOMAIN?.trim() || undefined;
  const className = ingressClass(f, context);
  const progress = new Progress(f.io.stderr, f.now, f.log);
  // A dry run prints the objects: stored secrets appear as placeholders, their values are never read.
  const secrets = deploySecrets(f, context, 'placeholders');
  const translation = await renderDryRun({
    source,
    environment,
    namespace,
    ...(domain ? { endpointDomain: domain } : {}),
    ...(className ? { ingressClass: className } : {}),
    env,
    // No context: no registry, and contextName "" (messages say there is no current context).
    setup: context ? buildSetup(context, f.env, f.cwd) : offlineSetup(f),
    progress,
    ...(secrets.stored ? { storedSecrets: secrets.stored } : {}),
  });
  // The warnings deploy prints, in its order: the manifest's, then the Compose files'.
  for (const w of [...(source.kind === 'manifest' ? source.manifest.warnings : []), ...translation.warnings]) progress.warn(w);
  f.io.stdout.write(objectsToYaml(translation.objects));
}

/** Builds with no context: no registry, and a backend that is never opened (a dry run builds nothing). */
function offlineSetup(f: Factory): BuildSetup {
  return {
    cwd: f.cwd,
    contextName: '',
    credentials: DockerCredentials.load(f.env),
    backend: () => Promise.reject(new DevtoolError('a dry run builds nothing')),
  };
}
