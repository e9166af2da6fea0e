/**
 * Labels the CLI writes on objects in a namespace and the service reads: as activity there (its
 * idle sleep and deletion: server/namespaces/idle.ts), and to show what runs there (its dashboard:
 * server/dashboard/model.ts).
 */

/** On every object an environment's deploy makes, pod templates too (src/kube/labels.ts). */
export const ENVIRONMENT_LABEL = 'devtool.dev/environment';

/** On the ConfigMap recording a deployed environment (src/deploy/state.ts): its `updated` is the last deploy. */
export const ENVIRONMENT_STATE_LABEL = 'devtool.dev/environment-state';
/** On the dev Deployment of `up` (src/dev/mirror.ts), its pods and volumes: the dev name. */
export const DEV_LABEL = 'devtool.dev/dev';
