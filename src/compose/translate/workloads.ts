/**
 * A service's workload: a Deployment (long-running, no storage of its own), a StatefulSet
 * (long-running with named or anonymous volumes, so its data follows the pod), or a Job (restart
 * no/never/none/on-failure: runs once; deploy.restart_policy.max_attempts is the retry limit).
 */
import type { V1Container, V1EnvVar, V1PodTemplateSpec, V1ResourceRequirements } from '@kubernetes/client-node';
import { serviceLabels, serviceSelector } from '../../kube/labels.ts';
import type { WorkloadObject } from '../../kube/objects.ts';
import type { ComposeService, ResourceAmounts } from '../model.ts';
import type { TranslateState } from './state.ts';
import { containerPorts, portName } from './network.ts';
import { readinessProbe } from './probes.ts';
import { mountsHostClaims, ownsStorage, podStorage } from './volumes.ts';

/** Retries of a Job whose restart policy is on-failure and that sets no max_attempts (Kubernetes' own default). */
const defaultOnFailureRetries = 6;

export function workload(ctx: TranslateState, service: ComposeService, image: string): WorkloadObject {
  const name = ctx.serviceNames.get(service.name)!;
  const labels = serviceLabels(ctx.options.name, name);
  const annotations = service.labels.size > 0 ? { annotations: Object.fromEntries(service.labels) } : {};
  const metadata = { name, labels, ...annotations };

  if (service.workload === 'one-off') {
    const storage = podStorage(ctx, service, false);
    const template = podTemplate(ctx, service, image, storage);
    // Never restart in place: each retry is a new pod, so the pods of failed attempts (and their
    // logs) stay around for `deploy` to show why the Job failed.
    template.spec!.restartPolicy = 'Never';
    const retries = service.maxAttempts ?? (service.restart === 'on-failure' ? defaultOnFailureRetries : 0);
    return {
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata,
      spec: {
        backoffLimit: retries,
        ...(service.replicas !== 1 ? { completions: service.replicas, parallelism: service.replicas } : {}),
        template,
      },
    };
  }

  const selector = { matchLabels: serviceSelector(ctx.options.name, name) };
  if (ownsStorage(service)) {
    const storage = podStorage(ctx, service, true);
    return {
      apiVersion: 'apps/v1',
      kind: 'StatefulSet',
      metadata,
      spec: {
        // The governing Service: the ClusterIP Service of the same name (absent when the service
        // has no port, which Kubernetes accepts).
        serviceName: name,
        replicas: service.replicas,
        selector,
        template: podTemplate(ctx, service, image, storage),
        ...(storage.claimTemplates.length > 0 ? { volumeClaimTemplates: storage.claimTemplates } : {}),
      },
    };
  }
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata,
    spec: {
      replicas: service.replicas,
      selector,
      // A claim of runtime data (ReadWriteOnce): the old pod stops before its replacement starts.
      // Not `Recreate`: server-side apply cannot switch an existing Deployment to it (the
      // defaulted rollingUpdate it keeps is then refused).
      ...(mountsHostClaims(ctx, service) ? { strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 0, maxUnavailable: 1 } } } : {}),
      template: podTemplate(ctx, service, image, podStorage(ctx, service, false)),
    },
  };
}

function podTemplate(ctx: TranslateState, service: ComposeService, image: string, storage: ReturnType<typeof podStorage>): V1PodTemplateSpec {
  const name = ctx.serviceNames.get(service.name)!;
  return {
    metadata: {
      labels: serviceLabels(ctx.options.name, name),
      ...(service.labels.size > 0 ? { annotations: Object.fromEntries(service.labels) } : {}),
    },
    spec: {
      containers: [container(service, name, image, storage.mounts)],
      ...(service.stopGracePeriodSeconds !== undefined ? { terminationGracePeriodSeconds: service.stopGracePeriodSeconds } : {}),
      ...(storage.volumes.length > 0 ? { volumes: storage.volumes } : {}),
    },
  };
}

/**
 * Kubernetes expands $(VAR) in command, args and env values and turns $$ into $; Compose has
 * already done its own interpolation, so every remaining $ is meant literally and is doubled.
 */
function literal(text: string): string {
  return text.replaceAll('$', '$$$$');
}

function container(service: ComposeService, name: string, image: string, mounts: V1Container['volumeMounts']): V1Container {
  const env: V1EnvVar[] = [...service.environment].map(([k, v]) => ({ name: k, value: literal(v) }));
  const ports = containerPorts(service);
  const resources = resourceRequirements(service.resources.requests, service.resources.limits);
  const caps = {
    ...(service.capAdd.length > 0 ? { add: [...service.capAdd] } : {}),
    ...(service.capDrop.length > 0 ? { drop: [...service.capDrop] } : {}),
  };
  return {
    name,
    image,
    ...(service.entrypoint ? { command: service.entrypoint.map(literal) } : {}),
    ...(service.command ? { args: service.command.map(literal) } : {}),
    ...(service.workingDir ? { workingDir: service.workingDir } : {}),
    ...(env.length > 0 ? { env } : {}),
    ...(ports.length > 0 ? { ports: ports.map((p) => ({ name: portName(p), containerPort: p.container, protocol: p.protocol })) } : {}),
    ...(service.healthcheck ? { readinessProbe: readinessProbe(service.healthcheck) } : {}),
    ...(resources ? { resources } : {}),
    ...(Object.keys(caps).length > 0 ? { securityContext: { capabilities: caps } } : {}),
    ...(mounts && mounts.length > 0 ? { volumeMounts: mounts } : {}),
  };
}

function resourceRequirements(requests: ResourceAmounts, limits: ResourceAmounts): V1ResourceRequirements | undefined {
  const pick = (a: ResourceAmounts): Record<string, string> | undefined => {
    const out: Record<string, string> = {};
    if (a.cpu) out['cpu'] = a.cpu;
    if (a.memory) out['memory'] = a.memory;
    return Object.keys(out).length > 0 ? out : undefined;
  };
  const r = pick(requests);
  const l = pick(limits);
  if (!r && !l) return undefined;
  return { ...(r ? { requests: r } : {}), ...(l ? { limits: l } : {}) };
}
