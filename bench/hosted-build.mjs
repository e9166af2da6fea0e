// A hosted build (a service context: the chart's BuildKit daemon, through the service's build
// tunnel and the front door) next to the same `devtool build` on the local BuildKit daemon
// (BUILDKIT_HOST=127.0.0.1:1234, buildkit/buildkitd.sh), same Dockerfile, same context, same
// registry (localhost:5000). Two cases per round:
//   changed: a context of --mb MiB of incompressible files, one of them new each round, so the
//            context is sent and the COPY and RUN steps run again;
//   cached:  the same build again: every step CACHED (the fixed cost: tunnel, session, push check).
// Rounds alternate the order of the two sides. Writes its result under bench/results/ as hosted-build.json (bench/results.mjs).
//   node bench/hosted-build.mjs [--rounds N] [--mb N]
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { figure, writeResult } from './results.mjs';

const arg = (name, fallback) => {
  const i = process.argv.indexOf(name);
  return i === -1 ? fallback : Number(process.argv[i + 1]);
};
const rounds = arg('--rounds', 3);
const mb = arg('--mb', 20);
const root = new URL('..', import.meta.url).pathname;
const URL_ = 'https://devtool.devtool.test';
const CA = join(process.env.DEVTOOL_FRONT_DOOR_STATE ?? '/var/lib/devtool-front-door', 'ca.crt');

function run(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { encoding: 'utf8', maxBuffer: 64 << 20, ...opts });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} exited ${r.status}: ${r.stderr.slice(-2000)}`);
  return r.stdout;
}
const lastLine = (text) => text.trim().split('\n').pop();
function timed(fn) {
  const start = process.hrtime.bigint();
  fn();
  return Math.round(Number(process.hrtime.bigint() - start) / 1e6);
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const up = (script) => lastLine(run('bash', [join(root, script), 'up'], { stdio: ['ignore', 'pipe', 'inherit'] }));
up('cluster/cluster.sh');
const local = up('buildkit/buildkitd.sh');
run(process.execPath, [join(root, 'scripts/build.mjs')]);
if (lastLine(run('bash', [join(root, 'scripts/service-up.sh')], { stdio: ['ignore', 'pipe', 'inherit'] })) !== URL_)
  throw new Error('service:up did not end with the URL');
const id = Date.now().toString(36);
const token = lastLine(run('npm', ['run', '--silent', 'service:user', '--', `bench${id}`], { cwd: root }));

const dir = mkdtempSync(join(tmpdir(), 'bench-hosted-build-'));
const app = join(dir, `hosted-bench-${id}`);
mkdirSync(join(app, 'data'), { recursive: true });
for (let i = 0; i < mb; i++) writeFileSync(join(app, 'data', `blob${i}`), randomBytes(1 << 20));
writeFileSync(
  join(app, 'Dockerfile'),
  ['FROM localhost:5000/debian:bookworm', 'COPY data/ /data/', 'RUN sha256sum /data/* > /sums.txt && du -sh /data', ''].join('\n'),
);
const env = { ...process.env, DEVTOOL_HOME: join(dir, 'home'), HOME: join(dir, 'home'), DEVTOOL_DISABLE_ANALYTICS: '1', DEVTOOL_CA_CERT: CA };
delete env.BUILDKIT_HOST;
const devtool = (args, extra = {}) => run(process.execPath, [join(root, 'dist/devtool.cjs'), ...args], { cwd: app, env: { ...env, ...extra } });
devtool(['context', 'use', URL_, '--token', token]);

const sides = {
  hosted: (args) => devtool(args),
  local: (args) => devtool(args, { BUILDKIT_HOST: local.replace('tcp://', '') }),
};
// Warm both daemons' base image and cache once (not timed).
for (const build of Object.values(sides)) build(['build', '-f', 'Dockerfile']);

const results = { hosted: { changed: [], cached: [] }, local: { changed: [], cached: [] } };
for (let round = 0; round < rounds; round++) {
  for (const side of round % 2 === 0 ? ['hosted', 'local'] : ['local', 'hosted']) {
    writeFileSync(join(app, 'data', 'changed'), `${side} ${round} ${randomBytes(8).toString('hex')}`);
    results[side].changed.push(timed(() => sides[side](['build', '-f', 'Dockerfile'])));
    results[side].cached.push(timed(() => sides[side](['build', '-f', 'Dockerfile'])));
  }
}

// The bench's user and its namespace go (the service keeps its token Secrets owned by the ServiceAccount).
const kubectl = (args) => run('bash', [join(root, 'cluster/cluster.sh'), 'kubectl', ...args]);
kubectl(['delete', 'namespace', `bench${id}-devtool`, '--wait=false']);
kubectl(['-n', 'devtool', 'delete', 'serviceaccount', `user-bench${id}`]);

const ratio = (kind) => +(median(results.hosted[kind]) / median(results.local[kind])).toFixed(2);
writeResult({
  bench: 'hosted-build',
  figures: {
    hostedChangedMedian: figure(median(results.hosted.changed), 'ms'),
    hostedCachedMedian: figure(median(results.hosted.cached), 'ms'),
    changedToLocal: figure(ratio('changed'), 'x'),
    cachedToLocal: figure(ratio('cached'), 'x'),
  },
  baseline: { localChangedMedian: figure(median(results.local.changed), 'ms'), localCachedMedian: figure(median(results.local.cached), 'ms') },
  details: { contextMiB: mb, rounds, runsMs: results },
});
