import { UsageError } from '../../cli/errors.ts';
import type { CommandHandler } from '../../cli/spec.ts';
import { deployCompose, prepareCompose } from '../../deploy/compose-deploy.ts';
import { deployManifest } from '../../deploy/manifest-deploy.ts';
import { environmentName } from '../../deploy/name.ts';
import { Progress } from '../../deploy/progress.ts';
import { resolveDeploySource } from '../../deploy/source.ts';
import { parseVariables } from '../../deploy/variables.ts';
import { objectsToYaml } from '../../kube/manifest-yaml.ts';
import { clusterTarget, endpointDomain } from '../../kube/target.ts';
import { loadManifest } from '../../manifest/load.ts';

export const runDeploy: CommandHandler = async (f, inv) => {
  const variables = parseVariables(inv.list('var'));
  const source = resolveDeploySource(f.cwd, inv.has('file') ? inv.string('file') : undefined);
  const { context, namespace } = await clusterTarget(f, inv.string('namespace'));
  if (source.kind === 'manifest') {
    const manifest = loadManifest(source.file, { cwd: f.cwd, env: { ...f.env, ...variables } });
    if (inv.bool('dry-run')) throw new UsageError('--dry-run applies to Compose files only: the commands of a manifest cannot be previewed');
    const environment = environmentName(inv.string('name') ?? manifest.name, source.folder);
    const { KubeClient } = await import('../../kube/client.ts');
    const client = await KubeClient.create(context, f.env, namespace);
    const progress = new Progress(f.io.stderr, f.now);
    const domain = endpointDomain(f, context);
    await deployManifest(
      client,
      { manifest, environment, namespace, contextName: context.name, ...(domain ? { endpointDomain: domain } : {}), env: f.env, variables, timeoutMs: inv.duration('timeout')!, wait: inv.bool('wait'), build: inv.bool('build') },
      progress,
      f.now,
    );
    progress.done(`environment ${environment} deployed in namespace ${namespace}`);
    return;
  }
  const options = {
    cwd: source.folder,
    files: source.files,
    environment: environmentName(inv.string('name'), source.folder),
    namespace,
    endpointDomain: endpointDomain(f, context),
    // --var values are variables of the Compose file too, above the shell's.
    env: { ...f.env, ...variables },
    timeoutMs: inv.duration('timeout')!,
    wait: inv.bool('wait'),
    variables,
  };
  if (inv.bool('dry-run')) {
    f.io.stdout.write(objectsToYaml(prepareCompose(options).translation.objects));
    return;
  }
  const { KubeClient } = await import('../../kube/client.ts');
  const client = await KubeClient.create(context, f.env, namespace);
  const progress = new Progress(f.io.stderr, f.now);
  const translation = await deployCompose(client, options, progress, f.now);
  progress.done(`environment ${options.environment} deployed in namespace ${namespace}`);
  for (const e of translation.endpoints) f.io.stdout.write(`${e.url}\n`);
};
