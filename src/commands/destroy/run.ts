import type { CommandHandler } from '../../cli/spec.ts';
import { destroyEnvironment } from '../../deploy/destroy.ts';
import { environmentName } from '../../deploy/name.ts';
import { Progress } from '../../deploy/progress.ts';
import { clusterTarget } from '../../kube/target.ts';

export const runDestroy: CommandHandler = async (f, inv) => {
  const { context, namespace } = await clusterTarget(f, inv.string('namespace'));
  const environment = environmentName(inv.string('name'), f.cwd);
  const { KubeClient } = await import('../../kube/client.ts');
  const client = await KubeClient.create(context, f.env, namespace);
  const progress = new Progress(f.io.stderr, f.now);
  const result = await destroyEnvironment(client, { environment, volumes: inv.bool('volumes'), wait: inv.bool('wait'), timeoutMs: inv.duration('timeout')! }, progress, f.now);
  if (!result.found) {
    progress.done(`nothing to destroy: no environment ${environment} in namespace ${namespace}`);
    return;
  }
  progress.done(`environment ${environment} destroyed in namespace ${namespace} (${result.deleted.length} objects deleted)`);
  if (result.keptVolumes.length) progress.warn(`kept ${result.keptVolumes.length} volume(s): ${result.keptVolumes.join(', ')}; 'devtool destroy --volumes' deletes them`);
};
