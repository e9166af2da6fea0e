// The dashboard's namespace page: its first load (the page and its one script, their bytes and
// time, with a Bearer token as scripts do) and the live-update latency (a pod's status change,
// Terminating after a delete, seen in the page's event stream), next to `kubectl get pods --watch`
// seeing the same change in the same run. The service is the built program (dist/devtool-service.cjs
// `serve`) started here on loopback against the local cluster, as bench/namespace-list.mjs does; the
// namespace is the user's personal one with a 2-replica Deployment and an environment record.
// Writes bench/results/dashboard.json (bench/results.mjs); progress on stderr.
//
//   node bench/dashboard.mjs [--runs N]
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { get } from 'node:http';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { figure, writeResult } from './results.mjs';

const runsArg = process.argv.indexOf('--runs');
const RUNS = runsArg !== -1 ? Number(process.argv[runsArg + 1]) : 20;
const CHANGES = Math.max(3, Math.round(RUNS / 2));
const root = fileURLToPath(new URL('..', import.meta.url));
const serviceProgram = join(root, 'dist', 'devtool-service.cjs');

function must(r, what) {
  if (r.status !== 0) throw new Error(`${what} exited ${r.status}: ${r.stderr}`);
  return r.stdout;
}

if (!existsSync(serviceProgram)) must(spawnSync(process.execPath, ['scripts/build.mjs'], { cwd: root, encoding: 'utf8' }), 'build');
const admin = must(spawnSync('bash', [join(root, 'cluster/cluster.sh'), 'up'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }), 'cluster.sh up')
  .trim()
  .split('\n')
  .pop();
const tmp = mkdtempSync(join(tmpdir(), 'devtool-bench-dash-'));
const binDir = '/var/cache/devtool-cluster/bin';
const kubectlBin = join(
  binDir,
  readdirSync(binDir).find((d) => d.startsWith('k8s-') && existsSync(join(binDir, d, 'kubectl'))),
  'kubectl',
);
const kubeEnv = { PATH: process.env.PATH, HOME: tmp, KUBECONFIG: admin };
const kubectl = (args, input) =>
  must(spawnSync(kubectlBin, args, { encoding: 'utf8', env: kubeEnv, ...(input ? { input } : {}) }), `kubectl ${args.join(' ')}`);

const run = randomBytes(3).toString('hex');
const serviceNs = `bench-dash-${run}`;
const user = `benchdash${run}`;
const ns = `${user}-devtool`;
const caFile = join(tmp, 'ca.crt');
const server = kubectl(['config', 'view', '--raw', '--minify', '-o', 'jsonpath={.clusters[0].cluster.server}']);
const caData = kubectl(['config', 'view', '--raw', '--minify', '-o', 'jsonpath={.clusters[0].cluster.certificate-authority-data}']);
writeFileSync(caFile, Buffer.from(caData, 'base64'));
kubectl(['create', 'namespace', serviceNs]);
kubectl(['label', 'namespace', serviceNs, 'devtool.dev/e2e=true']);

const port = await new Promise((resolve) => {
  const s = createServer().listen(0, '127.0.0.1', () => {
    const p = s.address().port;
    s.close(() => resolve(p));
  });
});
const serviceEnv = {
  ...process.env,
  KUBECONFIG: admin,
  POD_NAMESPACE: serviceNs,
  HOST: '127.0.0.1',
  PORT: String(port),
  LOG_LEVEL: 'warn',
  DEVTOOL_OBJECT_LABELS: 'devtool.dev/e2e=true',
  DEVTOOL_KUBE_SERVER: server,
  DEVTOOL_KUBE_CA_FILE: caFile,
};
const service = spawn(process.execPath, [serviceProgram, 'serve'], { env: serviceEnv, stdio: 'ignore' });
const url = `http://127.0.0.1:${port}`;

/** One GET: status, bytes, and the time to its last byte. */
function fetchTimed(path, token) {
  const start = process.hrtime.bigint();
  return new Promise((resolve, reject) => {
    get(`${url}${path}`, { headers: { authorization: `Bearer ${token}`, accept: 'text/html' } }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode, body: Buffer.concat(chunks), ms: Number(process.hrtime.bigint() - start) / 1e6 }));
    }).on('error', reject);
  });
}

/** The page's event stream: calls `onSection(html, at)` with each workloads section. */
function liveStream(token, onSection) {
  const req = get(`${url}/namespaces/${ns}/events`, { headers: { authorization: `Bearer ${token}` } }, (res) => {
    let buffer = '';
    res.on('data', (c) => {
      const at = performance.now();
      buffer += c.toString();
      for (let i = buffer.indexOf('\n\n'); i >= 0; i = buffer.indexOf('\n\n')) {
        const block = buffer.slice(0, i);
        buffer = buffer.slice(i + 2);
        const data = /^event: section\ndata: (.*)$/m.exec(block)?.[1];
        if (data) {
          const s = JSON.parse(data);
          if (s.id === 'workloads') onSection(s.html, at);
        }
      }
    });
  });
  return () => req.destroy();
}

const median = (v) => {
  const s = [...v].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const p95 = (v) => [...v].sort((a, b) => a - b)[Math.min(v.length - 1, Math.ceil(v.length * 0.95) - 1)];
const round = (n) => Math.round(n * 10) / 10;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const APP = `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: ${ns}, labels: {devtool.dev/environment: shop}}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web, devtool.dev/environment: shop}}
    spec:
      terminationGracePeriodSeconds: 2
      containers: [{name: web, image: localhost:5000/nginx:1}]
---
apiVersion: v1
kind: ConfigMap
metadata: {name: devtool-env-shop, namespace: ${ns}, labels: {devtool.dev/environment-state: shop}}
data: {name: shop, status: deployed, source: compose, updated: "2026-12-02T12:00:00Z"}
`;

const runningPods = () =>
  kubectl([
    'get',
    'pods',
    '-n',
    ns,
    '-l',
    'app=web',
    '-o',
    'jsonpath={range .items[*]}{.metadata.name} {.status.phase} {.metadata.deletionTimestamp}{"\\n"}{end}',
  ])
    .trim()
    .split('\n')
    .map((l) => l.split(' '))
    .filter(([, phase, deleting]) => phase === 'Running' && !deleting)
    .map(([name]) => name);

try {
  for (let i = 0; ; i++) {
    if (
      (await fetch(`${url}/readyz`).then(
        (r) => r.status,
        () => 0,
      )) === 200
    )
      break;
    if (i > 100) throw new Error('the service did not get ready in 10 s');
    await sleep(100);
  }
  const token = must(spawnSync(process.execPath, [serviceProgram, 'create-user', user], { env: serviceEnv, encoding: 'utf8' }), 'create-user')
    .trim()
    .split('\n')
    .pop();
  kubectl(['apply', '-f', '-'], APP);
  kubectl(['rollout', 'status', '-n', ns, 'deployment/web', '--timeout=120s']);

  // First load: the very first (the user's Kubernetes token still to be made), then RUNS more.
  const loads = [];
  let page;
  for (let i = 0; i <= RUNS; i++) {
    page = await fetchTimed(`/namespaces/${ns}`, token);
    if (page.status !== 200) throw new Error(`the namespace page answered ${page.status}`);
    loads.push(page.ms);
  }
  const scriptPath = /<script src="([^"]+)"/.exec(page.body.toString())[1];
  const script = await fetchTimed(scriptPath, token);
  const pageBytes = page.body.length + script.body.length;

  // Live updates: the page's stream and kubectl's watch open side by side; a pod deleted; when each sees it Terminating.
  let latest = '';
  const sectionSeen = new Map();
  const stop = liveStream(token, (html, at) => {
    latest = html;
    for (const m of html.matchAll(/data-pod="([^"]+)"><code>[^<]*<\/code>: <span class="[a-z]*" data-status>Terminating/g)) {
      if (!sectionSeen.has(m[1])) sectionSeen.set(m[1], at);
    }
  });
  const watch = spawn(
    kubectlBin,
    [
      'get',
      'pods',
      '-n',
      ns,
      '--watch',
      '--output-watch-events',
      '-o',
      'custom-columns=T:.type,N:.object.metadata.name,D:.object.metadata.deletionTimestamp',
      '--no-headers',
    ],
    { env: kubeEnv },
  );
  const kubectlSeen = new Map();
  let watchBuffer = '';
  watch.stdout.on('data', (c) => {
    const at = performance.now();
    watchBuffer += c.toString();
    for (let i = watchBuffer.indexOf('\n'); i >= 0; i = watchBuffer.indexOf('\n')) {
      const [, name, deleting] = watchBuffer.slice(0, i).trim().split(/\s+/);
      watchBuffer = watchBuffer.slice(i + 1);
      if (name && deleting && deleting !== '<none>' && !kubectlSeen.has(name)) kubectlSeen.set(name, at);
    }
  });
  await sleep(2000); // both connected and settled
  if (!latest) throw new Error('the event stream sent no workloads section');
  const live = [];
  const kube = [];
  for (let i = 0; i < CHANGES; i++) {
    for (let w = 0; runningPods().length < 2; w++) {
      if (w > 120) throw new Error('the Deployment did not get 2 running pods back');
      await sleep(500);
    }
    const pod = runningPods()[0];
    const t0 = performance.now();
    kubectl(['delete', 'pod', '-n', ns, pod, '--wait=false']);
    for (let w = 0; !(sectionSeen.has(pod) && kubectlSeen.has(pod)); w++) {
      if (w > 200) throw new Error(`pod ${pod}: page ${sectionSeen.has(pod)}, kubectl ${kubectlSeen.has(pod)} after 20 s`);
      await sleep(100);
    }
    live.push(sectionSeen.get(pod) - t0);
    kube.push(kubectlSeen.get(pod) - t0);
    process.stderr.write('.');
  }
  process.stderr.write('\n');
  stop();
  watch.kill();

  const warm = loads.slice(1);
  writeResult({
    bench: 'dashboard',
    figures: {
      firstLoadColdMs: figure(round(loads[0]), 'ms'),
      firstLoadMedianMs: figure(round(median(warm)), 'ms'),
      firstLoadP95Ms: figure(round(p95(warm)), 'ms'),
      pageWeightKB: figure(round(pageBytes / 1024), 'KB'),
      liveUpdateMedianMs: figure(round(median(live)), 'ms'),
      liveUpdateP95Ms: figure(round(p95(live)), 'ms'),
      liveOverKubectlMedianMs: figure(round(median(live.map((v, i) => v - kube[i]))), 'ms'),
    },
    baseline: { kubectlWatchMedianMs: figure(round(median(kube)), 'ms'), kubectlWatchP95Ms: figure(round(p95(kube)), 'ms') },
    targets: [
      { figure: 'firstLoadMedianMs', max: 300, text: 'first load under 300 ms on the local cluster' },
      { figure: 'firstLoadColdMs', max: 300, text: 'first load under 300 ms on the local cluster (the very first, a token still to be made)' },
      { figure: 'pageWeightKB', max: 200, text: 'under 200 KB of page weight' },
    ],
    details: {
      runs: RUNS,
      changes: CHANGES,
      pageBytes: page.body.length,
      scriptBytes: script.body.length,
      loadsMs: loads.map(round),
      liveMs: live.map(round),
      kubectlWatchMs: kube.map(round),
      note:
        'Times from the delete command (kubectl delete --wait=false, its own start-up included in both) to the pod seen Terminating: ' +
        "in a workloads section of the page's event stream, and in kubectl get pods --watch (admin kubeconfig).",
    },
  });
} finally {
  service.kill('SIGTERM');
  spawnSync(kubectlBin, ['delete', 'namespace', serviceNs, ns, '--wait=false'], { env: kubeEnv });
  rmSync(tmp, { recursive: true, force: true });
}
