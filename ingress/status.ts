/**
 * The addresses an Ingress shows (`kubectl get ingress`): the nodes' where the front door listens
 * (peers.ts), on each Ingress it serves; none on an Ingress of ours it cannot serve (and shows one
 * of our addresses). Pure: which status to write; main.ts writes them.
 */
import type { V1Ingress, V1IngressLoadBalancerIngress } from '@kubernetes/client-node';
import { type FrontDoorSettings, servedByUs } from './translate.ts';

export interface StatusUpdate {
  ingress: V1Ingress;
  loadBalancer: V1IngressLoadBalancerIngress[];
}

export function statusUpdates(ingresses: readonly V1Ingress[], served: readonly string[], addresses: readonly string[], s: FrontDoorSettings): StatusUpdate[] {
  const ours = new Set(served);
  const want = [...addresses].sort();
  const updates: StatusUpdate[] = [];
  for (const ing of ingresses) {
    if (!servedByUs(ing, s)) continue;
    const have = (ing.status?.loadBalancer?.ingress ?? []).map((i) => i.ip ?? '');
    if (ours.has(`${ing.metadata?.namespace}/${ing.metadata?.name}`)) {
      if ([...have].sort().join() !== want.join()) updates.push({ ingress: ing, loadBalancer: want.map((ip) => ({ ip })) });
    } else if (have.some((ip) => want.includes(ip))) {
      updates.push({ ingress: ing, loadBalancer: [] });
    }
  }
  return updates;
}
