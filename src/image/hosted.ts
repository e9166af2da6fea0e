/**
 * The hosted build service of a service context: the cluster's BuildKit daemon (installed by the
 * chart), reached through the service's build tunnel with the user's API token
 * (src/service/build-tunnel.ts), driven by the same BuildKit backend as any daemon (buildkit.ts).
 * No Kubernetes rights are needed (no port-forward), so a user who is not an admin builds too.
 */
import { readFileSync } from 'node:fs';
import { DevtoolError, UnavailableError } from '../base/errors.ts';
import { oneLine } from '../base/text.ts';
import type { ResolvedContext } from '../context/store.ts';
import { openBuildTunnel } from '../service/build-tunnel.ts';
import { trustedCas } from '../service/tls.ts';
import type { BuildBackend, BuildLog, BuildRequest, BuildResult } from './backend.ts';
import { BuildkitBackend, keepaliveSettings } from './buildkit.ts';
import type { TagLookup } from './registry.ts';

/** Builds tried when the tunnel is cut under them (not when the build itself fails). */
export const CUT_ATTEMPTS = 3;

export async function openHostedBackend(
  context: Pick<ResolvedContext, 'name' | 'token' | 'certificate'>,
  env: Readonly<NodeJS.ProcessEnv>,
): Promise<BuildBackend> {
  const url = context.name;
  if (!context.token) {
    throw new UnavailableError(
      `images of the service context ${url} are built by its hosted builder, which needs a logged-in user: ` +
        `log in with 'devtool context use ${url} --token <API_TOKEN>' or set DEVTOOL_TOKEN`,
    );
  }
  const ca = trustedCas(env, context.certificate, (file) => readFileSync(file, 'utf8'));
  // A malformed DEVTOOL_KEEPALIVE_CLIENT_* is an error before the service is asked.
  keepaliveSettings(env);
  const tunnel = await openBuildTunnel({ url, token: context.token, ...(ca ? { ca } : {}) });
  const name = `the hosted builder of ${url}`;
  const backend = new BuildkitBackend({ address: tunnel.address, env, name });
  return {
    name,
    async build(request: BuildRequest, log: BuildLog, signal?: AbortSignal): Promise<BuildResult> {
      for (let attempt = 1; ; attempt++) {
        const cutsBefore = tunnel.cuts;
        try {
          return await backend.build(request, log, signal);
        } catch (err) {
          // A later upgrade refused (a token revoked mid-build...): that is the cause, not "cannot reach" the local socket.
          const failure = tunnel.failure;
          if (failure && err instanceof DevtoolError) throw new DevtoolError(`building ${request.tags[0] ?? '(no tag)'} failed: ${failure.message}`);
          // The far side cut the connection mid-build (the front door's proxy closes upgraded
          // connections when it reloads its configuration, which any deploy with endpoints causes):
          // the build is run again, and BuildKit's cache keeps the steps that finished.
          if (tunnel.cuts > cutsBefore && attempt < CUT_ATTEMPTS && !signal?.aborted) {
            log.line(`the connection to the hosted builder was cut (${oneLine((err as Error).message)}): building again (${attempt + 1}/${CUT_ATTEMPTS})`);
            continue;
          }
          throw err;
        }
      }
    },
    async lookup(image: string, signal?: AbortSignal): Promise<TagLookup> {
      const found = await backend.lookup(image, signal);
      if (found.state !== 'unknown') return found;
      // A refused upgrade (a revoked token...) is the cause, not the local socket's closing.
      return tunnel.failure ? { state: 'unknown', reason: `${name}: ${tunnel.failure.message}` } : found;
    },
    async close(): Promise<void> {
      await backend.close();
      await tunnel.close();
    },
  };
}
