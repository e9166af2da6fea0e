import type { CommandHandler } from '../../cli/spec.ts';
import { environmentUrls, formatUrls, ingressReader, type IngressReader } from '../../deploy/endpoints.ts';
import { environmentName } from '../../app/name.ts';
import type { Factory } from '../../factory.ts';
import { clusterTarget, endpointDomain, endpointDomainHint, type KubeTarget } from '../../kube/target.ts';
import type { endpointsOptions } from './spec.ts';

export const runEndpoints = endpointsHandler(async (f, target) => ingressReader(await f.kube(target)));

/** The handler, reading the namespace `clusterOf` gives (the real one above; an in-memory one in its test). */
export function endpointsHandler(clusterOf: (f: Factory, target: KubeTarget) => Promise<IngressReader>): CommandHandler<typeof endpointsOptions> {
  return async (f, inv) => {
    const { context, namespace } = await clusterTarget(f, { context: inv.opts.context, namespace: inv.opts.namespace });
    const environment = environmentName(inv.opts.name, f.cwd);
    const urls = await environmentUrls(await clusterOf(f, { context, namespace }), environment);
    const format = inv.opts.output;
    // With no endpoint domain, deploy makes no public endpoints; say so, and how to set one
    // (on stderr, whatever the format: stdout stays what --output asks for).
    if (urls.length === 0 && !endpointDomain(f, context)) {
      f.io.stderr.write(
        `No public endpoints for environment ${environment} in namespace ${namespace}: ` +
          `no endpoint domain is configured for context ${context.name}; ${endpointDomainHint(context.name)}\n`,
      );
    } else if (!format && urls.length === 0) f.io.stderr.write(`No public endpoints for environment ${environment} in namespace ${namespace}\n`);
    f.io.stdout.write(formatUrls(urls, format));
  };
}
