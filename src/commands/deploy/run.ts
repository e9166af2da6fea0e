import { UsageError } from '../../base/errors.ts';
import { buildSetup } from '../../image/select.ts';
import type { CommandHandler } from '../../cli/spec.ts';
import { previewCompose } from '../../deploy/compose-deploy.ts';
import { deployEnvironment, loadSource } from '../../deploy/environment-deploy.ts';
import { environmentName } from '../../app/name.ts';
import { Progress } from '../../deploy/progress.ts';
import { parseVariables } from '../../deploy/variables.ts';
import { objectsToYaml } from '../../kube/manifest-yaml.ts';
import { clusterTarget, endpointDomain } from '../../kube/target.ts';
import type { deployOptions } from './spec.ts';

export const runDeploy: CommandHandler<typeof deployOptions> = async (f, inv) => {
  const variables = parseVariables(inv.opts.var);
  const { context, namespace } = await clusterTarget(f, { namespace: inv.opts.namespace });
  // --var values are variables of the manifest and of Compose files too, above the shell's.
  const source = loadSource(f.cwd, inv.given.file, { ...f.env, ...variables });
  const domain = endpointDomain(f, context);
  const environment =
    source.kind === 'manifest' ? environmentName(inv.opts.name ?? source.manifest.name, source.manifest.folder) : environmentName(inv.opts.name, source.folder);
  if (inv.opts.dryRun) {
    if (source.kind === 'manifest') throw new UsageError('--dry-run applies to Compose files only: the commands of a manifest cannot be previewed');
    const preview = new Progress(f.io.stderr, f.now, f.log);
    const translation = await previewCompose(
      {
        cwd: source.folder,
        files: source.files,
        environment,
        namespace,
        ...(domain ? { endpointDomain: domain } : {}),
        env: { ...f.env, ...variables },
      },
      buildSetup(context, f.env, f.cwd),
      preview,
    );
    // Warnings on stderr: stdout stays the YAML.
    for (const w of translation.warnings) preview.warn(w);
    f.io.stdout.write(objectsToYaml(translation.objects));
    return;
  }
  const client = await f.kube({ context, namespace });
  const progress = new Progress(f.io.stderr, f.now, f.log);
  const { endpoints } = await deployEnvironment(
    {
      client,
      namespace,
      contextName: context.name,
      ...(domain ? { endpointDomain: domain } : {}),
      env: f.env,
      dependenciesDir: f.home.dependenciesDir,
      builds: buildSetup(context, f.env, f.cwd),
      progress,
      now: f.now,
    },
    { source, environment, variables, timeoutMs: inv.opts.timeout, wait: inv.opts.wait, build: inv.opts.build, forceDependencies: inv.opts.dependencies },
  );
  progress.done(`environment ${environment} deployed in namespace ${namespace}`);
  for (const url of endpoints) f.io.stdout.write(`${url}\n`);
};
