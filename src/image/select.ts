/**
 * Which daemon builds, from the current context and the environment:
 *   1. BUILDKIT_HOST set: that BuildKit daemon (whatever the context);
 *   2. a service context: its hosted build service (hosted.ts: the cluster's BuildKit daemon
 *      through the service's build tunnel, with the user's API token);
 *   3. a context whose builder is `tcp://HOST:PORT`: that BuildKit daemon;
 *   4. otherwise the local Docker daemon (DOCKER_HOST, else /var/run/docker.sock).
 * The backend is opened only when an image must really be built.
 */
import type { ResolvedContext } from '../context/store.ts';
import type { BuildBackend } from './backend.ts';
import { buildkitAddress as defaultBuildkitAddress } from './buildkit.ts';
import { DockerCredentials } from './docker-config.ts';

export type BuilderChoice =
  | { readonly kind: 'docker' }
  | { readonly kind: 'buildkit'; readonly address: string }
  | { readonly kind: 'service'; readonly url: string; readonly context: Pick<ResolvedContext, 'name' | 'token' | 'certificate'> };

/** buildkit.ts's rule for BUILDKIT_HOST and `tcp://` builders; a parameter so tests can pass their own. */
export type BuildkitAddressFn = (env: Readonly<NodeJS.ProcessEnv>, contextBuilder?: string) => string | undefined;

export function chooseBuilder(
  context: Pick<ResolvedContext, 'name' | 'isDevtool' | 'builder' | 'token' | 'certificate'>,
  env: Readonly<NodeJS.ProcessEnv>,
  buildkitAddress: BuildkitAddressFn = defaultBuildkitAddress,
): BuilderChoice {
  if (context.isDevtool && !env.BUILDKIT_HOST?.trim()) return { kind: 'service', url: context.name, context };
  const address = buildkitAddress(env, context.isDevtool ? undefined : context.builder);
  return address ? { kind: 'buildkit', address } : { kind: 'docker' };
}

export async function openBackend(choice: BuilderChoice, env: Readonly<NodeJS.ProcessEnv>, credentials: DockerCredentials): Promise<BuildBackend> {
  switch (choice.kind) {
    case 'service': {
      const { openHostedBackend } = await import('./hosted.ts');
      return openHostedBackend(choice.context, env);
    }
    case 'buildkit': {
      const { BuildkitBackend } = await import('./buildkit.ts');
      return new BuildkitBackend({ address: choice.address, env });
    }
    case 'docker': {
      const { DockerEngineBackend } = await import('./docker-engine.ts');
      return new DockerEngineBackend(env, credentials);
    }
  }
}

/** What builds need from the current context: the registry, and a backend opened on demand. */
export interface BuildSetup {
  /** File names in messages are relative to it. */
  readonly cwd: string;
  readonly registry?: string;
  readonly contextName: string;
  readonly credentials: DockerCredentials;
  readonly backend: () => Promise<BuildBackend>;
}

/**
 * The builder is chosen when the first image must be built: a deploy with nothing to build never
 * looks at BUILDKIT_HOST or the daemon, and works on a service context.
 */
export function buildSetup(context: ResolvedContext, env: Readonly<NodeJS.ProcessEnv>, cwd: string): BuildSetup {
  const credentials = DockerCredentials.load(env);
  return {
    cwd,
    ...(context.registry ? { registry: context.registry } : {}),
    contextName: context.name,
    credentials,
    backend: () => openBackend(chooseBuilder(context, env), env, credentials),
  };
}
