/**
 * The address an Ingress shows (`kubectl get ingress`): the node's, where the front door listens,
 * on each Ingress it serves; none on an Ingress of ours it cannot serve (and shows our address).
 * Pure: which status to write; main.ts writes them.
 */
import type { V1Ingress, V1IngressLoadBalancerIngress } from '@kubernetes/client-node';
import { type FrontDoorSettings, servedByUs } from './translate.ts';

export interface StatusUpdate {
  ingress: V1Ingress;
  loadBalancer: V1IngressLoadBalancerIngress[];
}

export function statusUpdates(ingresses: readonly V1Ingress[], served: readonly string[], address: string, s: FrontDoorSettings): StatusUpdate[] {
  const ours = new Set(served);
  const updates: StatusUpdate[] = [];
  for (const ing of ingresses) {
    if (!servedByUs(ing, s)) continue;
    const have = (ing.status?.loadBalancer?.ingress ?? []).map((i) => i.ip);
    if (ours.has(`${ing.metadata?.namespace}/${ing.metadata?.name}`)) {
      if (have.length !== 1 || have[0] !== address) updates.push({ ingress: ing, loadBalancer: [{ ip: address }] });
    } else if (have.includes(address)) {
      updates.push({ ingress: ing, loadBalancer: [] });
    }
  }
  return updates;
}
