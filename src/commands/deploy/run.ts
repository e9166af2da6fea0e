import { UnavailableError } from '../../cli/errors.ts';
import type { CommandHandler } from '../../cli/spec.ts';
import { deployCompose, prepareCompose } from '../../deploy/compose-deploy.ts';
import { environmentName } from '../../deploy/name.ts';
import { Progress } from '../../deploy/progress.ts';
import { resolveDeploySource } from '../../deploy/source.ts';
import { parseVariables } from '../../deploy/variables.ts';
import { objectsToYaml } from '../../kube/manifest-yaml.ts';
import { clusterTarget, endpointDomain } from '../../kube/target.ts';

export const runDeploy: CommandHandler = async (f, inv) => {
  const variables = parseVariables(inv.list('var'));
  const source = resolveDeploySource(f.cwd, inv.has('file') ? inv.string('file') : undefined);
  if (source.kind === 'manifest') {
    throw new UnavailableError(`'devtool deploy' of a manifest (${source.file}) is not available yet: devtool ${f.version} deploys Compose files only; pass one with --file`);
  }
  const { context, namespace } = await clusterTarget(f, inv.string('namespace'));
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
