/**
 * The front door runs on every node (a DaemonSet), one controller per node, each configuring its own
 * Caddy. What they share they must agree on without talking: the address Ingresses show is every
 * ready front door's node, and only one of them (the first by pod name) writes Ingress status and
 * events, so that N nodes do not mean N writers or N copies of each event. Pure: main.ts feeds it the
 * front door's pods from a watch.
 */
import type { V1Pod } from '@kubernetes/client-node';

export interface Self {
  /** This controller's pod (POD_NAME). */
  name: string;
  /** Its node's address (NODE_IP): it serves there as soon as its Caddy has a configuration. */
  address: string;
}

export interface PeerView {
  /** Every address the front door answers on, sorted: what a served Ingress shows. */
  addresses: string[];
  /** Whether this controller is the one that writes status and events. */
  publishes: boolean;
}

const ready = (p: V1Pod) => !p.metadata?.deletionTimestamp && (p.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');

export function peerView(pods: readonly V1Pod[], self: Self): PeerView {
  const others = pods.filter((p) => p.metadata?.name !== self.name && ready(p));
  const addresses = new Set([self.address, ...others.flatMap((p) => p.status?.hostIP ?? [])]);
  const first = others.map((p) => p.metadata?.name ?? '').sort()[0];
  return { addresses: [...addresses].sort(), publishes: first === undefined || self.name < first };
}
