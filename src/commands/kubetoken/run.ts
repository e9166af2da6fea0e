import { UsageError } from '../../base/errors.ts';
import type { CommandHandler } from '../../cli/spec.ts';
import type { ResolvedContext } from '../../context/store.ts';
import type { Factory } from '../../factory.ts';
import { looksLikeUrl, normalizeServiceUrl } from '../../service/cloud.ts';
import { execCredential } from '../../service/kube-credentials.ts';
import type { kubetokenOptions } from './spec.ts';

/**
 * kubectl runs this for every command (it keeps no credential between its own runs): the cached
 * token while it is fresh, else a new one from the service. Only the ExecCredential goes to stdout.
 */
export const runKubetoken: CommandHandler<typeof kubetokenOptions> = async (f, inv) => {
  if (inv.opts.context === undefined) throw new UsageError('--context: required: the URL of the devtool service context');
  const ctx = await serviceContext(f, inv.opts.context);
  if (!ctx.isDevtool) throw new UsageError(`--context: "${ctx.name}" is not a devtool service context: its kubeconfig entry has its own credentials`);
  const credentials = await (await f.kubeCredentials(ctx)).current();
  f.io.stdout.write(execCredential(credentials));
};

/**
 * The named context; a context that DEVTOOL_URL and DEVTOOL_TOKEN make (CI, scripts) is stored
 * nowhere, so it is taken from the environment kubectl passes on when it names the same URL.
 */
async function serviceContext(f: Factory, name: string): Promise<ResolvedContext> {
  const current = await f.contexts.current();
  if (current?.source === 'environment' && looksLikeUrl(name) && normalizeServiceUrl(name) === current.name) return current;
  return f.contexts.select(name);
}
