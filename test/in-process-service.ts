/**
 * The devtool service program in this process, for commands tested in-process: the real
 * application (server/app.ts: every route, its validation and its one-line refusals) on the
 * in-memory store, listening on a loopback port, with users made as the operator makes them. The
 * CLI's real client (src/service/client.ts) talks to it; `client` is the maker a test factory takes
 * as its `service`, whatever URL the context names (SERVICE_URL by default). Pipeline runs and
 * previews act on the server's in-memory cluster (`cluster`: server/pipelines/fake-cluster.ts),
 * whose Jobs a test ends, and whose namespaces' Ingress hosts it sets (`ingressHosts`); namespace
 * sleep and wake act on `owned` (server/namespaces/fake-owner-cluster.ts).
 */
import { createAccount, type CreatedAccount } from '../server/accounts.ts';
import { type App, buildApp, type ServiceConfig } from '../server/app.ts';
import type { KubeTokenIssuer } from '../server/kube-credentials.ts';
import { fakeOwnerCluster } from '../server/namespaces/fake-owner-cluster.ts';
import { fakeCluster } from '../server/pipelines/fake-cluster.ts';
import { MemoryStore } from '../server/store/memory.ts';
import type { Factory } from '../src/factory.ts';
import { ServiceClient } from '../src/service/client.ts';
import { type CommandSandbox, runCommand, success, TEST_NOW } from './command-harness.ts';

/** The URL the service's contexts name, and the one its refusals tell users to log in again with. */
export const SERVICE_URL = 'https://devtool.example';

export const KUBE_SERVER = 'https://k8s.example:6443';
export const KUBE_CA = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';

export interface InProcessService {
  app: App;
  store: MemoryStore;
  /** The loopback URL it listens at. */
  address: string;
  /** A user and an admin, each with a first API token. */
  alice: CreatedAccount;
  admin: CreatedAccount;
  /** The test factory's `service`: a real client of this service. */
  client: Factory['service'];
  /** The users whose Kubernetes tokens were asked for, in order. */
  kubeTokensIssued: string[];
  /** What pipeline runs and previews act on. */
  cluster: ReturnType<typeof fakeCluster>;
  /** By namespace: the hosts of its Ingresses (a preview's endpoints). */
  ingressHosts: Map<string, string[]>;
  /** What namespace sleep and wake act on: its Deployments and CronJobs, by namespace. */
  owned: ReturnType<typeof fakeOwnerCluster>;
  close(): Promise<void>;
}

export async function inProcessService(config: Partial<ServiceConfig> = {}): Promise<InProcessService> {
  const store = new MemoryStore();
  const kubeTokensIssued: string[] = [];
  const issuer: KubeTokenIssuer = {
    async issue(user, seconds) {
      kubeTokensIssued.push(user);
      return { token: `sa-token-of-${user}-${kubeTokensIssued.length}`, expiresAt: new Date(TEST_NOW.getTime() + seconds * 1000).toISOString() };
    },
  };
  const cluster = fakeCluster();
  const ingressHosts = new Map<string, string[]>();
  const owned = fakeOwnerCluster();
  const app = await buildApp({
    store,
    config: { version: '9.9.9', publicUrl: SERVICE_URL, runnerImage: 'runner:1', rateLimit: { max: 10_000, timeWindowMs: 60_000 }, ...config },
    now: () => TEST_NOW,
    logStream: false,
    kubeCredentials: { server: KUBE_SERVER, certificateAuthority: KUBE_CA, tokenSeconds: 3600, issuer },
    pipelineCluster: async () => cluster.cluster,
    previewCluster: async () => ({ ...cluster.cluster, ingressHosts: async (ns) => ingressHosts.get(ns) ?? [], scaleWorkloads: async () => 0 }),
    ownerCluster: owned.factory,
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const port = (app.server.address() as { port: number }).port;
  const address = `http://127.0.0.1:${port}`;
  const alice = await createAccount(store, 'alice', false, TEST_NOW);
  const admin = await createAccount(store, 'root', true, TEST_NOW);
  return {
    app,
    store,
    address,
    alice,
    admin,
    client: async ({ token, timeoutMs }) => new ServiceClient({ url: address, ...(token ? { token } : {}), ...(timeoutMs ? { timeoutMs } : {}) }),
    kubeTokensIssued,
    cluster,
    ingressHosts,
    owned,
    close: () => app.close(),
  };
}

/** `devtool context use SERVICE_URL --token ...` in the sandbox: the user's service context, stored and current. */
export async function logIn(sandbox: CommandSandbox, service: InProcessService, user: CreatedAccount): Promise<void> {
  success(await runCommand(['context', 'use', SERVICE_URL, '--token', user.token], { sandbox, service: service.client }));
}
