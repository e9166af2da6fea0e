// Wake on request: the time from ONE request to a sleeping namespace's endpoint to the
// application's first 200, for a Compose application of two services whose images are on the node
// (test/e2e/fixtures/wake: web answers what api answers, so the first 200 needs both). Baseline,
// measured in the same runs: the same application scaled down and up again by hand (the Kubernetes
// API's scale, what `kubectl scale` does) with the namespace awake, to its first 200.
//
// Each run: `devtool namespace sleep`, until every front door sends the endpoint to the waking page
// (its controller's log says so); then one GET (the waking page, 503) and GETs every 250 ms until
// the first 200 (what the page's reloads, every 5 s, would reach at their next reload: the details
// give that figure too). Then the baseline: both Deployments scaled to 0, their pods gone, scaled to
// 1, GETs every 250 ms to the first 200. The two alternate run by run, so background load hits
// them alike. The service is the chart-installed one (`scripts/service-up.sh`): run it under the
// service lock, `flock /tmp/devtool-service-e2e.lock node bench/wake-on-request.mjs`.
// Target: under 15 s for two services whose images are on the node (every run).
// Writes bench/results/wake-on-request.json (bench/results.mjs); progress on stderr.
//
//   node bench/wake-on-request.mjs [--runs N]
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { lastLine, pct, root, run, sleep } from './lib.mjs';
import { figure, writeResult } from './results.mjs';

const runsArg = process.argv.indexOf('--runs');
const RUNS = runsArg !== -1 ? Number(process.argv[runsArg + 1]) : 5;
const TARGET_MS = 15_000;
const RELOAD_MS = 5_000;
const REGISTRY = process.env.DEVTOOL_TEST_REGISTRY || 'localhost:5000';
const cli = join(root, 'dist', 'devtool.cjs');
const caFile = join(process.env.DEVTOOL_FRONT_DOOR_STATE ?? '/var/lib/devtool-front-door', 'ca.crt');
const ca = () => readFileSync(caFile, 'utf8');
const kubectl = (...args) => run('bash', [join(root, 'cluster/cluster.sh'), 'kubectl', ...args]);
const script = (path, args) => lastLine(run('bash', [join(root, path), ...args], { stdio: ['ignore', 'pipe', 'inherit'] }));

/** One GET over HTTPS trusting the front door's CA: its status and body (status 0 on an error). */
function get(url) {
  return new Promise((resolve) => {
    const req = request(url, { ca: ca(), timeout: 10_000, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', () => resolve({ status: 0, body: '' }));
    req.end();
  });
}

/** GETs every 250 ms until `url` answers 200 with `body`; ms since `start`. */
async function first200(url, body, start, limitMs = 300_000) {
  for (;;) {
    const r = await get(url);
    if (r.status === 200 && r.body === body) return Date.now() - start;
    if (Date.now() - start > limitMs) throw new Error(`${url} did not answer within ${limitMs / 1000} s: ${r.status} ${r.body.slice(0, 200)}`);
    await sleep(250);
  }
}

async function until(what, ms, probe) {
  const deadline = Date.now() + ms;
  while (!probe()) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${ms / 1000} s`);
    await sleep(500);
  }
}

/** Whether every front door's controller last logged the namespace among those sent to the waking page. */
function frontDoorsSendToWakingPage(namespace) {
  const pods = kubectl('-n', 'devtool', 'get', 'pods', '-l', 'app.kubernetes.io/component=front-door', '-o', 'name').trim().split('\n').filter(Boolean);
  return (
    pods.length > 0 &&
    pods.every((pod) => {
      const log = kubectl('-n', 'devtool', 'logs', pod, '-c', 'controller', '--since=10m');
      const last = log
        .split('\n')
        .filter((l) => l.includes('sending to the waking page the hosts of:'))
        .at(-1);
      return last?.includes(`${namespace} (sleeping)`) ?? false;
    })
  );
}

const noPods = (namespace) => kubectl('-n', namespace, 'get', 'pods', '-o', 'name').trim() === '';

run(process.execPath, [join(root, 'scripts/build.mjs')]);
const url = script('scripts/service-up.sh', []);
const id = randomBytes(3).toString('hex');
const user = `wakebench${id}`;
const namespace = `wake-bench-${id}`;
const token = script('scripts/service-user.sh', [user]);
const tmp = mkdtempSync(join(tmpdir(), 'devtool-bench-wake-'));
const env = { PATH: process.env.PATH, HOME: tmp, DEVTOOL_HOME: join(tmp, 'devtool-home'), KUBECONFIG: join(tmp, 'kubeconfig'), DEVTOOL_DISABLE_ANALYTICS: '1' };
const devtool = (args, opts = {}) => run(process.execPath, [cli, ...args], { env: { ...env, ...opts.env }, cwd: opts.cwd ?? tmp, timeout: 300_000 });
const endpoint = `https://web-${namespace}.devtool.test/`;
const page = `api page ${id}\n`;

const wake = [];
const byHand = [];
try {
  devtool(['context', 'use', url, '--token', token], { env: { DEVTOOL_CA_CERT: caFile } });
  devtool(['namespace', 'create', namespace]);
  devtool(['deploy', '--name', 'web', '--wait', '--timeout', '3m'], { cwd: join(root, 'test/e2e/fixtures/wake'), env: { REGISTRY, PAGE_TOKEN: id } });
  await first200(endpoint, page, Date.now());
  for (let i = 0; i < RUNS; i++) {
    devtool(['namespace', 'sleep', namespace]);
    await until('the pods stop', 120_000, () => noPods(namespace));
    await until('the front doors send the endpoint to the waking page', 60_000, () => frontDoorsSendToWakingPage(namespace));
    const asked = Date.now();
    const one = await get(endpoint);
    if (one.status !== 503 || !one.body.includes('http-equiv="refresh"')) throw new Error(`the one request: ${one.status} ${one.body.slice(0, 300)}`);
    wake.push(await first200(endpoint, page, asked));

    kubectl('-n', namespace, 'scale', 'deployment', 'web', 'api', '--replicas=0');
    await until('the pods stop', 120_000, () => noPods(namespace));
    const scaled = Date.now();
    kubectl('-n', namespace, 'scale', 'deployment', 'web', 'api', '--replicas=1');
    byHand.push(await first200(endpoint, page, scaled));
    process.stderr.write(`run ${i + 1}/${RUNS}: wake on request ${wake.at(-1)} ms, scaled up by hand ${byHand.at(-1)} ms\n`);
  }
} finally {
  spawnSync('bash', [join(root, 'cluster/cluster.sh'), 'kubectl', 'delete', 'namespace', namespace, `${user}-devtool`, '--wait=false'], { stdio: 'ignore' });
  spawnSync('bash', [join(root, 'cluster/cluster.sh'), 'kubectl', '-n', 'devtool', 'delete', 'serviceaccount', `user-${user}`], { stdio: 'ignore' });
  spawnSync('bash', [join(root, 'cluster/cluster.sh'), 'kubectl', '-n', 'devtool', 'delete', 'secrets', '-l', `devtool.dev/user=${user}`], { stdio: 'ignore' });
  rmSync(tmp, { recursive: true, force: true });
}
const atReload = (ms) => Math.ceil(ms / RELOAD_MS) * RELOAD_MS;
process.stderr.write(`target: wake on request under ${TARGET_MS / 1000} s for two services whose images are on the node (every run)\n`);
writeResult({
  bench: 'wake-on-request',
  figures: {
    wakeToFirst200Median: figure(pct(wake, 50), 'ms'),
    wakeToFirst200Slowest: figure(Math.max(...wake), 'ms'),
    overScaleByHandMedian: figure(pct(wake, 50) - pct(byHand, 50), 'ms'),
  },
  baseline: { scaleByHandToFirst200Median: figure(pct(byHand, 50), 'ms'), scaleByHandToFirst200Slowest: figure(Math.max(...byHand), 'ms') },
  targets: [{ figure: 'wakeToFirst200Slowest', max: TARGET_MS, text: 'under 15 s for two services whose images are on the node' }],
  details: {
    runs: RUNS,
    services: 2,
    pollMs: 250,
    runsMs: { wakeOnRequest: wake, scaleByHand: byHand },
    // A browser on the waking page sees the application at its next reload (every 5 s from the page's load).
    browserReloadAtMs: wake.map(atReload),
  },
});
