/** The public URLs of an environment, read back from its Ingress objects in the cluster. */
import type { V1Ingress } from '@kubernetes/client-node';
import type { KubeClient } from '../kube/client.ts';
import { environmentSelector } from '../kube/labels.ts';

/** What endpoints asks of the namespace, so a test gives an in-memory one; `ingressReader` is the real one. */
export interface IngressReader {
  /** The Ingresses `labelSelector` selects. */
  ingresses(labelSelector: string): Promise<V1Ingress[]>;
}

/** The IngressReader of a client's namespace. */
export function ingressReader(client: KubeClient): IngressReader {
  return { ingresses: async (labelSelector) => (await client.networking.listNamespacedIngress({ namespace: client.namespace, labelSelector })).items };
}

export async function environmentUrls(reader: IngressReader, environment: string): Promise<string[]> {
  const urls = new Set<string>();
  for (const ingress of await reader.ingresses(environmentSelector(environment))) {
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
