/**
 * The labels devtool puts on every object it deploys. `destroy` and `endpoints` find an
 * environment's objects by the environment label alone, so it must be on everything (pod
 * templates too, so pods and their logs can be found the same way); the service label selects the
 * pods of one service (Services, workload selectors, progress per service).
 */
import { ENVIRONMENT_LABEL } from '../../api/activity-labels.ts';

export { ENVIRONMENT_LABEL };
export const SERVICE_LABEL = 'devtool.dev/service';
export const MANAGED_BY_LABEL = 'app.kubernetes.io/managed-by';
export const MANAGED_BY = 'devtool';

/** Labels of every object of an environment. */
export function environmentLabels(environment: string): Record<string, string> {
  return { [ENVIRONMENT_LABEL]: environment, [MANAGED_BY_LABEL]: MANAGED_BY };
}

/** Labels of the objects (and pods) of one service of an environment. */
export function serviceLabels(environment: string, service: string): Record<string, string> {
  return { ...environmentLabels(environment), [SERVICE_LABEL]: service };
}

/** The selector of a service's pods: stable across deploys (selectors of Deployments are immutable). */
export function serviceSelector(environment: string, service: string): Record<string, string> {
  return { [ENVIRONMENT_LABEL]: environment, [SERVICE_LABEL]: service };
}

/** A label selector string (for list calls and kubectl -l) matching every object of an environment. */
export function environmentSelector(environment: string): string {
  return `${ENVIRONMENT_LABEL}=${environment}`;
}
