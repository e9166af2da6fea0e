import { UsageError } from '../../cli/errors.ts';
import { buildSetup } from '../../build/select.ts';
import type { CommandHandler } from '../../cli/spec.ts';
import { prepareCompose } from '../../deploy/compose-deploy.ts';
import { deployEnvironment, loadSource } from '../../deploy/environment-deploy.ts';
import { environmentName } from '../../app/name.ts';
import { Progress } from '../../deploy/progress.ts';
import { parseVariables } from '../../deploy/variables.ts';
import { objectsToYaml } from '../../kube/manifest-yaml.ts';
import { clusterTarget, endpointDomain } from '../../kube/target.ts';

export const runDeploy: CommandHandler = async (f, inv) => {
  const variables = parseVariables(inv.list('var'));
  const { context, namespace } = await clusterTarget(f, inv.string('namespace'));
  // --var values are variables of the manifest and of Compose files too, above the shell's.
  const source = loadSource(f.cwd, inv.has('file') ? inv.string('file') : undefined, { ...f.env, ...variables });
  const domain = endpointDomain(f, context);
  const environment =
    source.kind === 'manifest' ? environmentName(inv.string('name') ?? source.manifest.name, source.manifest.folder) : environmentName(inv.string('name'), source.folder);
  if (inv.bool('dry-run')) {
    if (source.kind === 'manifest') throw new UsageError('--dry-run applies to Compose files only: the commands of a manifest cannot be previewed');
    const { translation } = prepareCompose({ cwd: source.folder, files: source.files, environment, namespace, ...(domain ? { endpointDomain: domain } : {}), env: { ...f.env, ...variables } });
    f.io.stdout.write(objectsToYaml(translation.objects));
    return;
  }
  const { KubeClient } = await import('../../kube/client.ts');
  const client = await KubeClient.create(context, f.env, namespace);
  const progress = new Progress(f.io.stderr, f.now, f.log);
  const { endpoints } = await deployEnvironment(
    { client, namespace, contextName: context.name, ...(domain ? { endpointDomain: domain } : {}), env: f.env, dependenciesDir: f.home.dependenciesDir, builds: buildSetup(context, f.env, f.cwd), progress, now: f.now },
    { source, environment, variables, timeoutMs: inv.duration('timeout')!, wait: inv.bool('wait'), build: inv.bool('build'), forceDependencies: inv.bool('dependencies') },
  );
  progress.done(`environment ${environment} deployed in namespace ${namespace}`);
  for (const url of endpoints) f.io.stdout.write(`${url}\n`);
};
