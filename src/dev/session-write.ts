/**
 * The one cluster write of session publishing (session-publisher.ts): a JSON merge patch of the
 * session annotation on the dev Deployment, with the credentials `up` runs with. A merge patch
 * never creates the Deployment, so a write after `down` deleted it fails (and is only logged).
 */
import * as k8s from '@kubernetes/client-node';
import { DEV_SESSION_ANNOTATION } from '../../api/dev-session.ts';
import { withTimeout, type KubeClient } from '../kube/client.ts';
import { describeKubeError } from '../kube/config.ts';

/** A write slower than this is given up (the next change or heartbeat writes again). */
const WRITE_TIMEOUT_MS = 10_000;

/** Writes the session annotation on the Deployment `name`; rejects with one line. */
export function sessionAnnotationWriter(client: KubeClient, name: string): (value: string) => Promise<void> {
  const asMergePatch = k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch);
  return async (value) => {
    const body = { metadata: { annotations: { [DEV_SESSION_ANNOTATION]: value } } };
    try {
      await withTimeout(
        client.apps.patchNamespacedDeployment({ name, namespace: client.namespace, body }, asMergePatch),
        WRITE_TIMEOUT_MS,
        `session state on deployment ${name}`,
      );
    } catch (err) {
      throw new Error(`deployment ${name}: ${describeKubeError(err)}`);
    }
  };
}
