/**
 * Tells a running `up` that its namespace was put to sleep (docs/service.md, "Sleeping namespaces"):
 * the sleep scales the dev Deployment to zero, marking it with REPLICAS_BEFORE_SLEEP, and without
 * this the tunnel would redial a pod that never comes, saying "reconnecting" for ever. Looked at
 * only while no dev pod is left, so a running `up` asks nothing more of the cluster.
 */
import type { V1Deployment, V1Pod } from '@kubernetes/client-node';
import { REPLICAS_BEFORE_SLEEP } from '../../api/namespace-sleep.ts';
import type { KubeClient } from '../kube/client.ts';
import type { Logger } from '../log/logger.ts';
import { DEV_LABEL } from './names.ts';

/** Whether one of these dev Deployments was scaled to zero by a namespace sleep. */
export function putToSleep(deployments: readonly V1Deployment[]): boolean {
  return deployments.some((d) => d.spec?.replicas === 0 && d.metadata?.annotations?.[REPLICAS_BEFORE_SLEEP] !== undefined);
}

export class NamespaceSleepWatch {
  /** Resolves with the line to stop on, once the dev Deployment is found asleep; never otherwise. */
  readonly asleep: Promise<string>;
  private found?: (line: string) => void;
  private checking = false;

  constructor(
    private readonly client: Pick<KubeClient, 'apps' | 'namespace'>,
    private readonly devName: string,
    private readonly log: Pick<Logger, 'debug'>,
  ) {
    this.asleep = new Promise((resolve) => {
      this.found = resolve;
    });
  }

  /** The dev pods the tunnel found none ready among: with none left at all, the dev Deployment is looked at. */
  offer(pods: readonly V1Pod[]): void {
    if (this.checking || !this.found || pods.some((p) => !p.metadata?.deletionTimestamp)) return;
    this.checking = true;
    void this.check().finally(() => {
      this.checking = false;
    });
  }

  private async check(): Promise<void> {
    const { namespace } = this.client;
    try {
      const list = await this.client.apps.listNamespacedDeployment({ namespace, labelSelector: `${DEV_LABEL}=${this.devName}` });
      if (!putToSleep(list.items)) return;
      this.found?.(
        `namespace ${namespace} was put to sleep: 'up ${this.devName}' stops; wake it with 'devtool namespace wake ${namespace}', then run 'devtool up' again`,
      );
      this.found = undefined;
    } catch (err) {
      this.log.debug(`${this.devName}: reading the dev Deployment for a namespace sleep failed: ${(err as Error).message}`);
    }
  }
}
