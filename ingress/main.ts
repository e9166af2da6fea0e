/**
 * devtool-ingress: the front door's ingress controller (dist/devtool-ingress.cjs, run beside Caddy
 * in the chart's front-door DaemonSet, one per node). It watches Ingresses, Services and Namespaces
 * cluster-wide and keeps its Caddy's configuration equal to their translation (translate.ts; a
 * sleeping namespace's hosts go to the waking page: sleeping.ts), watches the other front doors
 * (peers.ts), and records each namespace's last request from Caddy's access log (activity.ts).
 * Settings come from the environment (chart/templates/front-door.yaml sets them).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import * as k8s from '@kubernetes/client-node';
import { LAST_REQUEST } from '../api/namespace-sleep.ts';
import { ActivityRecorder, FileTail } from './activity.ts';
import { hasNameConstraints } from './ca.ts';
import { loadConfig } from './caddy-admin.ts';
import { Reconciler } from './controller.ts';
import { peerView } from './peers.ts';
import { statusUpdates } from './status.ts';
import { normalizeHost, parseAllowedHosts } from './hosts.ts';
import { type FrontDoorSettings, hostNamespaces, type NotServed } from './translate.ts';

function env(name: string, fallback?: string): string {
  const v = process.env[name]?.trim() || fallback;
  if (v === undefined) throw new Error(`${name} is not set`);
  return v;
}

let stopping = false;
const log = (line: string) => process.stdout.write(`${new Date().toISOString()} ${line}\n`);

function watch<T extends k8s.KubernetesObject>(
  name: string,
  informer: k8s.Informer<T> & k8s.ObjectCache<T>,
  onChange: () => void,
): k8s.Informer<T> & k8s.ObjectCache<T> {
  for (const ev of [k8s.ADD, k8s.UPDATE, k8s.DELETE] as const) informer.on(ev, onChange);
  // An informer stops on an error (a dropped watch, the apiserver restarting): start it again.
  informer.on(k8s.ERROR, (err: unknown) => {
    if (stopping) return;
    log(`watching ${name} failed, restarting in 3 s: ${(err as Error)?.message ?? err}`);
    setTimeout(() => informer.start().catch((e: Error) => log(`restarting the ${name} watch failed: ${e.message}`)), 3_000);
  });
  return informer;
}

async function main(): Promise<void> {
  const settings: FrontDoorSettings = {
    className: env('INGRESS_CLASS', 'devtool'),
    acceptWithoutClass: env('ACCEPT_WITHOUT_CLASS', 'false') === 'true',
    adminListen: `unix/${env('CADDY_ADMIN_SOCKET', '/run/caddy/admin.sock')}`,
    caCertFile: env('CA_CERT_FILE', '/ca/tls.crt'),
    caKeyFile: env('CA_KEY_FILE', '/ca/tls.key'),
    frontDoorHost: process.env.FRONT_DOOR_HOST?.trim() || undefined,
    endpointDomain: normalizeHost(env('ENDPOINT_DOMAIN')),
    allowedHosts: parseAllowedHosts(env('ALLOWED_HOSTS', '{}')),
    ...wakingSettings(),
  };
  const socket = settings.adminListen.slice('unix/'.length);
  const readyFile = env('READY_FILE', '/tmp/ready');
  const kc = new k8s.KubeConfig();
  kc.loadFromDefault();
  const net = kc.makeApiClient(k8s.NetworkingV1Api);
  const core = kc.makeApiClient(k8s.CoreV1Api);

  let reconciler: Reconciler | undefined;
  const changed = () => reconciler?.changed();
  const ingresses = watch(
    'Ingresses',
    k8s.makeInformer(kc, '/apis/networking.k8s.io/v1/ingresses', () => net.listIngressForAllNamespaces()),
    changed,
  );
  const services = watch(
    'Services',
    k8s.makeInformer(kc, '/api/v1/services', () => core.listServiceForAllNamespaces()),
    changed,
  );
  // The other front doors (one per node): POD_NAME, POD_NAMESPACE and PEER_SELECTOR name them.
  const self = { name: process.env.POD_NAME?.trim() ?? '', address: process.env.NODE_IP?.trim() ?? '' };
  const peerNamespace = process.env.POD_NAMESPACE?.trim();
  // Which namespaces sleep (their hosts go to the waking page) and which the service made (activity).
  const namespaces = watch(
    'Namespaces',
    k8s.makeInformer(kc, '/api/v1/namespaces', () => core.listNamespace()),
    changed,
  );
  const peerSelector = process.env.PEER_SELECTOR?.trim();
  const peers =
    self.name && peerNamespace && peerSelector
      ? watch(
          'front door pods',
          k8s.makeInformer(
            kc,
            `/api/v1/namespaces/${peerNamespace}/pods`,
            () => core.listNamespacedPod({ namespace: peerNamespace, labelSelector: peerSelector }),
            peerSelector,
          ),
          changed,
        )
      : undefined;
  await Promise.all([ingresses.start(), services.start(), namespaces.start(), peers?.start()]);
  log(`watching Ingresses of class ${settings.className}${settings.acceptWithoutClass ? ' and without a class' : ''}`);
  log(`hosts served: <name>-<namespace>.${settings.endpointDomain}, and by namespace ${JSON.stringify(settings.allowedHosts)}`);
  try {
    if (!hasNameConstraints(readFileSync(settings.caCertFile, 'utf8'))) {
      log(`the CA ${settings.caCertFile} has no name constraint: clients trust what it signs for any name (chart/values.yaml, ca, says how to make one)`);
    }
  } catch (e) {
    log(`cannot check the CA's name constraint: ${(e as Error).message}`);
  }
  // The addresses Ingresses of ours show (`kubectl get ingress`): the nodes' where we listen. One
  // front door writes them, and the events below.
  const view = () => peerView(peers?.list() ?? [], self);
  const publish = async (served: readonly string[]) => {
    const { addresses, publishes } = view();
    if (!self.address || !publishes) return;
    for (const u of statusUpdates(ingresses.list(), served, addresses, settings)) {
      await net.replaceNamespacedIngressStatus({
        name: u.ingress.metadata!.name!,
        namespace: u.ingress.metadata!.namespace!,
        body: { ...u.ingress, status: { loadBalancer: { ingress: u.loadBalancer } } },
      });
    }
  };
  // A Warning event on each Ingress not served, so its owner sees why (`kubectl describe ingress`).
  const notServed = async (problems: readonly NotServed[]) => {
    if (!view().publishes) return;
    const now = new Date();
    for (const p of problems) {
      const [namespace, name] = p.ingress.split('/') as [string, string];
      const ing = ingresses.get(name, namespace);
      await core.createNamespacedEvent({
        namespace,
        body: {
          metadata: { generateName: `${name}.`, namespace },
          involvedObject: { apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', namespace, name, uid: ing?.metadata?.uid },
          type: 'Warning',
          reason: 'NotServed',
          message: p.why,
          source: { component: 'devtool-front-door' },
          firstTimestamp: now,
          lastTimestamp: now,
          count: 1,
        },
      });
    }
  };
  reconciler = new Reconciler({
    view: { ingresses: () => ingresses.list(), services: () => services.list(), namespaces: () => namespaces.list() },
    settings,
    push: (config) => loadConfig(socket, config),
    notServed,
    publish,
    log,
    onLoaded: () => writeFileSync(readyFile, 'loaded\n'),
  });
  reconciler.start();
  const activity = settings.accessLog && peerNamespace ? recordActivity(settings, peerNamespace, () => ingresses.list(), namespaces, core) : undefined;
  const stop = () => {
    stopping = true;
    reconciler?.stop();
    clearInterval(activity);
    void Promise.all([ingresses.stop(), services.stop(), namespaces.stop(), peers?.stop()]).finally(() => process.exit(0));
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

/**
 * The waking page and the access log, from the chart's settings: WAKING_SERVICE (the service's
 * Service in the release namespace, POD_NAMESPACE) with FRONT_DOOR_KEY_FILE (the key the service
 * checks), ACCESS_LOG (the file Caddy writes and activity.ts reads).
 */
function wakingSettings(): Pick<FrontDoorSettings, 'wakingPage' | 'accessLog'> {
  const service = process.env.WAKING_SERVICE?.trim();
  const keyFile = process.env.FRONT_DOOR_KEY_FILE?.trim();
  const accessLog = process.env.ACCESS_LOG?.trim() || undefined;
  if (!service || !keyFile) return accessLog ? { accessLog } : {};
  const key = readFileSync(keyFile, 'utf8').trim();
  if (key.length < 32) throw new Error(`FRONT_DOOR_KEY_FILE ${keyFile}: the key is shorter than 32 characters`);
  const wakingPage = { service: { namespace: env('POD_NAMESPACE'), name: service, port: 'http' }, key };
  return accessLog ? { wakingPage, accessLog } : { wakingPage };
}

/** Every 10 s: the access log's new lines -> LAST_REQUEST of the namespaces they name (activity.ts). */
function recordActivity(
  settings: FrontDoorSettings,
  serviceNamespace: string,
  ingresses: () => readonly k8s.V1Ingress[],
  namespaces: k8s.ObjectCache<k8s.V1Namespace>,
  core: k8s.CoreV1Api,
): NodeJS.Timeout {
  const tail = new FileTail(settings.accessLog!);
  const mergePatch = k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch);
  const recorder = new ActivityRecorder(
    {
      namespaces: () => namespaces.list(),
      record: async (w) => {
        await core.patchNamespace({ name: w.namespace, body: { metadata: { annotations: { [LAST_REQUEST]: w.at } } } }, mergePatch);
      },
    },
    serviceNamespace,
    log,
  );
  let busy = false;
  return setInterval(() => {
    if (busy) return;
    busy = true;
    const owners = hostNamespaces(ingresses(), settings);
    recorder
      .pass(tail.read(), (host) => owners.get(host), Date.now())
      .catch((e: Error) => log(`recording requests failed: ${e.message}`))
      .finally(() => {
        busy = false;
      });
  }, 10_000);
}

main().catch((e: Error) => {
  log(`devtool-ingress: ${e.message}`);
  process.exit(1);
});
