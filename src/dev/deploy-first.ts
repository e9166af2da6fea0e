/**
 * `up`'s deploy step ("builds images and runs the deploy commands if needed"): with --deploy,
 * always; otherwise only when the Deployment to develop does not exist yet, which is when `up`
 * could not go on without it. An application deployed by other means (kubectl, a pipeline) is
 * never redeployed behind the developer's back. The deploy is `devtool deploy`'s own
 * (environment-deploy.ts): same environment name, images built when missing, dependencies first,
 * the state recorded in the cluster.
 */
import { relative } from 'node:path';
import { DevtoolError } from '../base/errors.ts';
import { buildSetup } from '../image/select.ts';
import { deployEnvironment } from '../deploy/environment-deploy.ts';
import type { Progress } from '../deploy/progress.ts';
import type { DevtoolHome } from '../home.ts';
import type { KubeClient } from '../kube/client.ts';
import { endpointDomain, ingressClass } from '../kube/target.ts';
import { findOriginal } from './original.ts';
import { environmentDeployed } from './standalone.ts';
import type { DevTarget } from './target.ts';

/** What the deploy step needs from outside (the command's factory passes itself). */
export interface DeployFirstEnv {
  readonly cwd: string;
  readonly env: Readonly<NodeJS.ProcessEnv>;
  readonly home: Pick<DevtoolHome, 'dependenciesDir'>;
  now(): Date;
}

/** How long a deploy may take when nothing says otherwise: `deploy --timeout`'s default. */
const DEPLOY_TIMEOUT_MS = 5 * 60_000;

/** Whether there is anything to deploy: a Compose application, or a manifest with a deploy section. */
export function hasDeploy(t: DevTarget): boolean {
  const { source } = t.deploy;
  return source.kind === 'compose' || source.manifest.deploy.commands.length > 0 || source.manifest.deploy.compose !== undefined;
}

/** --deploy with nothing to deploy is bad input: said before anything is done. */
export function checkDeployFlag(f: { readonly cwd: string }, t: DevTarget, force: boolean): void {
  if (force && !hasDeploy(t)) throw new DevtoolError(`--deploy: ${relative(f.cwd, t.manifest.file) || t.manifest.file} has no deploy section to run`);
}

/** Deploys when asked (--deploy) or needed, saying which and why. */
export async function deployIfNeeded(f: DeployFirstEnv, t: DevTarget, client: KubeClient, force: boolean, progress: Progress): Promise<void> {
  const { source, environment } = t.deploy;
  if (!hasDeploy(t)) return;
  if (!force) {
    if (await findOriginal(client, t.devName, t.dev)) return;
    if (t.dev.autocreate) {
      // Its Deployment may never exist (a standalone dev container): the environment's record says whether it was deployed.
      if (await environmentDeployed(client, environment)) return;
      progress.step(`environment ${environment} is not deployed in namespace ${t.namespace} yet: deploying it first`);
    } else {
      progress.step(`${t.devName} is not deployed in namespace ${t.namespace} yet: deploying environment ${environment} first`);
    }
  } else {
    progress.step(`deploying environment ${environment} (--deploy)`);
  }
  const domain = endpointDomain(f, t.context);
  const className = ingressClass(f, t.context);
  const { endpoints } = await deployEnvironment(
    {
      client,
      namespace: t.namespace,
      contextName: t.context.name,
      ...(domain ? { endpointDomain: domain } : {}),
      ...(className ? { ingressClass: className } : {}),
      env: f.env,
      dependenciesDir: f.home.dependenciesDir,
      builds: buildSetup(t.context, f.env, f.cwd),
      progress,
      now: f.now,
    },
    // No --wait: the Deployment to develop is scaled to zero right after, and depends_on is awaited anyway.
    { source, environment, variables: {}, timeoutMs: DEPLOY_TIMEOUT_MS, wait: false, build: false, forceDependencies: false },
  );
  progress.step(`environment ${environment} deployed${endpoints.length ? `: ${endpoints.join(', ')}` : ''}`);
}
