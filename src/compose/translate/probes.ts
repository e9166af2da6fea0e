/**
 * A Compose healthcheck as a readiness probe (Okteto does the same; no liveness probe: a failing
 * check in Compose marks a container unhealthy, it does not restart it). Settings the file leaves
 * out are left to Kubernetes' defaults (every 10 s, 1 s timeout, 3 failures) rather than
 * Compose's (30 s interval), so a dev environment becomes ready quickly.
 */
import type { V1Probe } from '@kubernetes/client-node';
import type { Healthcheck } from '../model.ts';

export function readinessProbe(h: Healthcheck): V1Probe {
  const probe: V1Probe = h.test.kind === 'http' ? { httpGet: { path: h.test.path, port: h.test.port } } : { exec: { command: [...h.test.command] } };
  // Kubernetes wants at least 1 for period, timeout and failure threshold.
  if (h.startPeriodSeconds !== undefined) probe.initialDelaySeconds = h.startPeriodSeconds;
  if (h.intervalSeconds !== undefined) probe.periodSeconds = Math.max(1, h.intervalSeconds);
  if (h.timeoutSeconds !== undefined) probe.timeoutSeconds = Math.max(1, h.timeoutSeconds);
  if (h.retries !== undefined) probe.failureThreshold = Math.max(1, h.retries);
  return probe;
}
