/**
 * The devtool service as users reach it: installed by its chart on the local cluster (`npm run
 * service:up`, once per test process: idempotent, a few seconds when warm, and an upgrade with the
 * same values restarts nothing), answering at https://devtool.devtool.test through the front door,
 * whose CA the tests trust the way a user does (DEVTOOL_CA_CERT on the first login, Chromium with
 * the CA imported). Users are made with `npm run service:user` and removed afterwards.
 *
 * The service has no way to delete an account (neither an API route nor an operator command), so
 * `removeUsers` deletes what the service made for each user, as an operator with the cluster's admin
 * kubeconfig would: the namespaces the user owns, its ServiceAccount and every Secret labelled with
 * its name (tokens, password, grants, stored secrets). User names carry a random part per run, so a
 * run never meets an earlier run's leftovers. Those an interrupted run leaves are labelled
 * devtool.dev/e2e=true (`markForCleanup`), which scripts/test.sh deletes before the next run.
 *
 * Sign-up on the service's page (service-login.e2e.test.ts) relies on `service.signup.mode: open`,
 * which service:up sets (the chart's default is an allow-list): the local install is a developer's
 * own and the tests', its name resolving on this machine only. With an allow-list the tests' users,
 * named anew every run, would be refused.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { request } from 'node:https';
import type { LookupAddress } from 'node:dns';
import type { LookupFunction } from 'node:net';
import { join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { ensureCluster } from '../../cluster/test-cluster.ts';
import { repoRoot, type Sandbox } from './cli.ts';
import { E2E_NAMESPACE_LABEL } from './cluster.ts';

/** The namespace the chart is installed in (scripts/service-up.sh). */
export const SERVICE_NAMESPACE = 'devtool';
export const SERVICE_PODS = 'app.kubernetes.io/component=service';
export const CA_FILE = join(process.env.DEVTOOL_FRONT_DOOR_STATE ?? '/var/lib/devtool-front-door', 'ca.crt');

export interface InstalledService {
  /** The service URL service:up printed last: https://devtool.devtool.test. */
  url: string;
  /** The front door's CA (PEM) and its file: what a user saves and sets DEVTOOL_CA_CERT to. */
  caFile: string;
  caPem: string;
  /** The cluster's admin kubeconfig (what the test itself checks with; never the CLI's). */
  kubeconfigPath: string;
  kc: k8s.KubeConfig;
  core: k8s.CoreV1Api;
  /** `service:user NAME [--admin]`: the user's API token (its last output line); removed by removeUsers. */
  createUser(name: string, admin?: boolean): Promise<string>;
  /** A user made another way (signed up on the page): labelled for cleanup and removed by removeUsers. */
  adoptUser(name: string): Promise<void>;
  /** Labels a namespace (one a user created through devtool) for scripts/test.sh's cleanup. */
  markForCleanup(namespace: string): Promise<void>;
  /** Deletes every user made or adopted here, with their namespaces and Secrets. */
  removeUsers(): Promise<void>;
}

let pending: Promise<InstalledService> | undefined;

/** service:up once per process, then the handle above. */
export function installedService(): Promise<InstalledService> {
  pending ??= install();
  return pending;
}

/**
 * service:up, again (up to 4 times, 20 s apart) while helm says another upgrade of the release is
 * under way: on a machine shared by several checkouts, each one's service:up upgrades the one
 * release, and helm refuses a second upgrade during the first instead of waiting.
 */
export function serviceUp(): string {
  const started = Date.now();
  for (let attempt = 1; ; attempt++) {
    const r = spawnSync('bash', [join(repoRoot, 'scripts/service-up.sh')], { encoding: 'utf8', timeout: 1_500_000 });
    if (r.status === 0) {
      console.log(`service:up took ${((Date.now() - started) / 1000).toFixed(1)} s`);
      return r.stdout.trim().split('\n').at(-1) ?? '';
    }
    if (attempt >= 4 || !/another operation \(install\/upgrade\/rollback\) is in progress/.test(r.stderr)) {
      throw new Error(`service:up failed (exit ${r.status}):\n${r.stderr}`);
    }
    spawnSync('sleep', ['20']);
  }
}

async function install(): Promise<InstalledService> {
  const { kubeconfigPath } = await ensureCluster();
  const url = serviceUp();
  if (!/^https:\/\//.test(url)) throw new Error(`service:up did not print the service URL last: ${JSON.stringify(url)}`);
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(kubeconfigPath);
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const users = new Set<string>();
  const merge = k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch);
  const mark = { metadata: { labels: { [E2E_NAMESPACE_LABEL]: 'true' } } };
  const markForCleanup = async (namespace: string) => {
    await core.patchNamespace({ name: namespace, body: mark }, merge);
  };
  const adoptUser = async (name: string) => {
    users.add(name);
    await core.patchNamespacedServiceAccount({ name: `user-${name}`, namespace: SERVICE_NAMESPACE, body: mark }, merge);
    await markForCleanup(`${name}-devtool`);
  };
  return {
    url,
    caFile: CA_FILE,
    caPem: readFileSync(CA_FILE, 'utf8'),
    kubeconfigPath,
    kc,
    core,
    async createUser(name, admin = false) {
      const r = spawnSync('npm', ['run', '--silent', 'service:user', '--', name, ...(admin ? ['--admin'] : [])], {
        cwd: repoRoot,
        encoding: 'utf8',
        timeout: 120_000,
      });
      if (r.status !== 0) throw new Error(`service:user ${name} failed (exit ${r.status}): ${r.stderr}`);
      await adoptUser(name);
      return r.stdout.trim().split('\n').at(-1) ?? '';
    },
    adoptUser,
    markForCleanup,
    async removeUsers() {
      for (const name of users) {
        const owned = await core.listNamespace({ labelSelector: `devtool.dev/owner=${name}` });
        for (const ns of owned.items) await core.deleteNamespace({ name: ns.metadata!.name! }).catch(() => {});
        await core.deleteNamespacedServiceAccount({ name: `user-${name}`, namespace: SERVICE_NAMESPACE }).catch(() => {});
        await core.deleteCollectionNamespacedSecret({ namespace: SERVICE_NAMESPACE, labelSelector: `devtool.dev/user=${name}` }).catch(() => {});
      }
      users.clear();
    },
  };
}

/** The service's pods that are not being deleted: name and IP. */
export async function servicePods(core: k8s.CoreV1Api): Promise<{ name: string; uid: string; ip: string }[]> {
  const pods = (await core.listNamespacedPod({ namespace: SERVICE_NAMESPACE, labelSelector: SERVICE_PODS })).items;
  return pods
    .filter((p) => !p.metadata?.deletionTimestamp && p.status?.podIP)
    .map((p) => ({ name: p.metadata!.name!, uid: p.metadata!.uid!, ip: p.status!.podIP! }));
}

export interface Fetched {
  status?: number;
  body?: string;
  error?: string;
}

/**
 * GET over HTTPS with Node, trusting `ca` only (none: Node's default roots); never throws. `via`:
 * connect to this address instead of the one the host resolves to (SNI and Host stay the URL's),
 * e.g. one node of several.
 */
export function httpsGet(url: string, ca?: string, via?: string): Promise<Fetched> {
  const lookup: LookupFunction = (_host, opts, done) =>
    opts.all ? (done as (e: null, a: LookupAddress[]) => void)(null, [{ address: via!, family: 4 }]) : done(null, via!, 4);
  return new Promise((resolve) => {
    // A connection of its own: the agent's kept-alive ones are keyed by host, not by address.
    const req = request(url, { ca, timeout: 10_000, ...(via ? { lookup, agent: false } : {}) }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode, body }));
    });
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', (e: NodeJS.ErrnoException) => resolve({ error: `${e.code ?? ''} ${e.message}` }));
    req.end();
  });
}

/** Polls `url` (HTTPS, trusting `ca`) until it answers 200, and returns that answer; fails with the last one. */
export async function whenAnswering(url: string, ca: string, ms = 60_000, via?: string): Promise<Fetched> {
  const deadline = Date.now() + ms;
  for (;;) {
    const last = await httpsGet(url, ca, via);
    if (last.status === 200) return last;
    if (Date.now() > deadline) throw new Error(`${url}${via ? ` through ${via}` : ''} never answered 200 within ${ms / 1000} s: ${JSON.stringify(last)}`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

/** The cluster's own kubectl, with only the sandbox's kubeconfig (`devtool kubeconfig` wrote it): what a user would run. */
export function kubectlAs(sb: Sandbox, args: string[], input?: string): { code: number | null; stdout: string; stderr: string } {
  const bin = '/var/cache/devtool-cluster/bin';
  const dir = readdirSync(bin).find((d) => d.startsWith('k8s-') && existsSync(join(bin, d, 'kubectl')));
  if (!dir) throw new Error(`no kubectl under ${bin}`);
  const r = spawnSync(join(bin, dir, 'kubectl'), ['--request-timeout=20s', ...args], {
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: sb.home, KUBECONFIG: sb.kubeconfig },
    encoding: 'utf8',
    timeout: 60_000,
    ...(input !== undefined ? { input } : {}),
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** One request to the service's API with a bearer token (the front door's CA trusted); never throws on a status. */
export function serviceCall(url: string, ca: string, token: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${url}${path}`,
      { method, ca, timeout: 30_000, headers: { authorization: `Bearer ${token}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) } },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
      },
    );
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', reject);
    req.end(body !== undefined ? JSON.stringify(body) : undefined);
  });
}
