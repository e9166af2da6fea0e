/**
 * `exec`: a command in a dev container that `up` made active from this folder, over the same SSH
 * tunnel `up` uses. What it asks of the namespace is `ExecApi`, so a test drives the refusals with
 * an in-memory fake; `execApi` is the real one.
 */
import { DevtoolError } from '../base/errors.ts';
import type { DevService } from '../manifest/model.ts';
import type { KubeClient } from '../kube/client.ts';
import type { Logger } from '../log/logger.ts';
import { readyDevPod } from './activate.ts';
import { FOLDER_ANNOTATION, mirrorName } from './names.ts';
import { findOriginal } from './original.ts';
import { DevTunnel } from './tunnel.ts';

/** The tunnel exec opens: started, its SSH connection used, then closed. */
export type ExecTunnel = Pick<DevTunnel, 'start' | 'connection' | 'close'>;

export interface ExecApi {
  /** The folder hash the mirror of `devName` was made active from; undefined when it has no mirror. */
  mirrorFolder(devName: string, dev: DevService): Promise<string | undefined>;
  /** Whether a pod of the dev container is running and ready. */
  hasReadyPod(devName: string): Promise<boolean>;
  /** A tunnel to the dev container, with the keys `up` left in this folder's local state. */
  tunnel(devName: string, keys: { hostPublicKey: string; clientPrivateKey: string }): ExecTunnel;
}

/** The ExecApi of a client's namespace. */
export function execApi(client: KubeClient, log: Logger): ExecApi {
  return {
    mirrorFolder: async (devName, dev) => {
      const { isNotFound } = await import('../kube/client.ts');
      const original = await findOriginal(client, devName, dev);
      try {
        const name = mirrorName(original?.metadata.name ?? devName);
        const mirror = await client.apps.readNamespacedDeployment({ name, namespace: client.namespace });
        return mirror.metadata?.annotations?.[FOLDER_ANNOTATION] ?? '';
      } catch (err) {
        if (isNotFound(err)) return undefined;
        throw err;
      }
    },
    hasReadyPod: async (devName) => (await readyDevPod(client, devName)) !== undefined,
    tunnel: (devName, keys) => new DevTunnel({ client, devName, ...keys, log }),
  };
}

/** The tunnel to the dev container `devName` active from `folder`, or one line saying why there is none. */
export async function execTunnel(
  cluster: ExecApi,
  t: { devName: string; dev: DevService; folder: string },
  keys: { hostPublicKey: string; clientPrivateKey: string },
  log: Pick<Logger, 'debug'>,
): Promise<ExecTunnel> {
  const folder = await cluster.mirrorFolder(t.devName, t.dev);
  if (folder !== t.folder) {
    log.debug(`exec: mirror folder ${folder} is not ${t.folder}`);
    throw inactive(t.devName);
  }
  if (!(await cluster.hasReadyPod(t.devName)))
    throw new DevtoolError(`dev container ${t.devName} has no running pod right now (restarting?); try again, or 'devtool up ${t.devName}'`);
  return cluster.tunnel(t.devName, keys);
}

export function inactive(devName: string): DevtoolError {
  return new DevtoolError(`no dev container is active for ${devName} from this folder: run 'devtool up ${devName}' first`);
}
