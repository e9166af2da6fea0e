/** The public URLs of an environment, read back from its Ingress objects in the cluster. */
import type { KubeClient } from '../kube/client.ts';
import { environmentSelector } from '../kube/labels.ts';

export async function environmentUrls(client: Pick<KubeClient, 'namespace' | 'networking'>, environment: string): Promise<string[]> {
  const list = await client.networking.listNamespacedIngress({ namespace: client.namespace, labelSelector: environmentSelector(environment) });
  const urls = new Set<string>();
  for (const ingress of list.items) {
    for (const rule of ingress.spec?.rules ?? []) {
      if (rule.host) urls.add(`https://${rule.host}`);
    }
  }
  return [...urls].sort();
}

export function formatUrls(urls: readonly string[], format: string | undefined): string {
  if (format === 'json') return `${JSON.stringify(urls, null, 2)}\n`;
  if (format === 'md') return urls.length ? `${urls.map((u) => `- [${u}](${u})`).join('\n')}\n` : '_No public endpoints._\n';
  return urls.length ? `${urls.join('\n')}\n` : '';
}
