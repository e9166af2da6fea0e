import type { CommandHandler } from '../../cli/spec.ts';
import { environmentUrls, formatUrls } from '../../deploy/endpoints.ts';
import { environmentName } from '../../app/name.ts';
import { clusterTarget } from '../../kube/target.ts';

export const runEndpoints: CommandHandler = async (f, inv) => {
  const { context, namespace } = await clusterTarget(f, inv.string('namespace'));
  const environment = environmentName(inv.string('name'), f.cwd);
  const { KubeClient } = await import('../../kube/client.ts');
  const client = await KubeClient.create(context, f.env, namespace);
  const urls = await environmentUrls(client, environment);
  const format = inv.string('output');
  if (!format && urls.length === 0) f.io.stderr.write(`No public endpoints for environment ${environment} in namespace ${namespace}\n`);
  f.io.stdout.write(formatUrls(urls, format));
};
