/**
 * A dev container with nothing to swap (`services.<name>.autocreate: true`, what `init` writes for
 * a folder with no deploy section): `up` creates a standalone dev Deployment, `<name>-devtool`,
 * instead of failing with "no Deployment named <name>"; `down` deletes it like a mirror.
 *
 * It is built by the mirror code from an original that exists only in memory (one container, no
 * replicas): the Secret, the claim, the agent and the sync are those of any dev container. Nothing
 * else is created (no Service: `forward` reaches the container through the SSH tunnel), so `down`
 * leaves nothing behind but the claim, which it keeps as for any dev container (`--volumes`
 * deletes it).
 *
 * Its image, when the manifest names none: the image the manifest's `build` section builds for it
 * (the entry named like the service, else the only one), built and pushed when the registry lacks
 * its content tag, exactly as `deploy` would. Never a public image the cluster may not reach.
 */
import { DevtoolError } from '../base/errors.ts';
import type { Progress } from '../deploy/progress.ts';
import { readEnvironment } from '../deploy/state.ts';
import { buildImages } from '../image/build-images.ts';
import { manifestImages, selectImages } from '../image/plan.ts';
import { buildSetup } from '../image/select.ts';
import type { KubeClient } from '../kube/client.ts';
import { toDnsLabel } from '../kube/naming.ts';
import type { DeploymentObject } from '../kube/objects.ts';
import type { Manifest } from '../manifest/model.ts';
import type { DevTarget } from './target.ts';

/** On a standalone dev Deployment: `up` created it (there was no original); `down` deletes it. */
export const AUTOCREATED_ANNOTATION = 'devtool.dev/dev-autocreated';

/** The original a standalone dev container is built from: never applied, only mirrored. */
export function standaloneOriginal(devName: string, image: string): DeploymentObject {
  const labels = { app: devName };
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: devName, labels },
    spec: {
      replicas: 0,
      selector: { matchLabels: labels },
      template: { metadata: { labels }, spec: { containers: [{ name: toDnsLabel(devName) || 'dev', image }] } },
    },
  };
}

/** The `build` entry whose image a standalone dev container runs: the one named like it, else the only one. */
export function buildEntryFor(manifest: Pick<Manifest, 'build'>, devName: string): string | undefined {
  const names = Object.keys(manifest.build);
  if (names.includes(devName)) return devName;
  return names.length === 1 ? names[0] : undefined;
}

/** What resolving the image needs from outside (the command's factory passes itself). */
export interface StandaloneImageEnv {
  readonly cwd: string;
  readonly env: Readonly<NodeJS.ProcessEnv>;
}

/**
 * The image of a standalone dev container: `image` of its services entry, else its build entry's
 * pushed content-tagged reference (built first when missing from the registry).
 */
export async function standaloneImage(f: StandaloneImageEnv, t: DevTarget, progress: Progress): Promise<string> {
  if (t.dev.image) return t.dev.image;
  const entry = buildEntryFor(t.manifest, t.devName);
  if (entry === undefined) {
    const built = Object.keys(t.manifest.build);
    throw new DevtoolError(
      `services.${t.devName} has no image and there is no Deployment to take it from: set services.${t.devName}.image, or ${
        built.length ? `name its build entry ${t.devName} (the build section has ${built.join(', ')})` : `add a build section that builds ${t.devName}`
      }`,
    );
  }
  const specs = selectImages(manifestImages(t.manifest, f.cwd), [entry]);
  const outcomes = await buildImages(specs, {
    mode: 'missing',
    ...buildSetup(t.context, f.env, f.cwd),
    repositoryPrefix: `${t.deploy.environment}-`,
    progress,
  });
  const image = outcomes.find((o) => o.name === entry)!.image;
  progress.step(`dev container ${t.devName} runs image ${image} (build.${entry})`);
  return image;
}

/**
 * Whether the environment of a standalone dev container was deployed already: its Deployment never
 * exists, so `up` goes by the environment's record instead (a deploy is not run again on each `up`).
 */
export async function environmentDeployed(client: KubeClient, environment: string): Promise<boolean> {
  return (await readEnvironment(client, environment))?.status === 'deployed';
}
