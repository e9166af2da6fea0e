// Compose translation benchmark: load (parse, interpolate, schema-validate, normalize) and
// translate a generated 200-service Compose file; the median of RUNS timed runs after WARMUP
// untimed ones. In the same run, as a baseline that gives the figure its context: a plain `yaml`
// parse of the same text (what reading the file costs at the very least). Also the first run
// alone (cold: includes loading the validator and JIT warm-up), which is what one `deploy` pays.
// Then the scale case: the same generator at 800 and at 8,000 services, and their ratio:
// translation must stay linear, so 10x the services may cost at most 10x the time (target: ratio
// under 10). Each timed run of a scale case is one fresh process (warmed up on the 200-service file,
// like the runs above), as each `deploy` is: timed one after the other in this process, the 8,000
// case paid for the garbage the runs before it left in the heap (1.6 s here against 0.6 s fresh),
// which measured this benchmark's history, not the code. Median of SCALE_RUNS processes per size.
// Writes bench/results/compose-translate.json (bench/results.mjs). Targets: the median under 200 ms,
// the 8,000-service time under 10x the 800-service time.
//
//   node --import tsx bench/compose-translate.mjs [--services N] [--runs N] [--scale-runs N] [--no-scale]
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { figure, writeResult } from './results.mjs';

const TARGET_MS = 200;
const WARMUP = 5;
const arg = (name, fallback) => {
  const i = process.argv.indexOf(name);
  return i !== -1 ? Number(process.argv[i + 1]) : fallback;
};
const SERVICES = arg('--services', 200);
const RUNS = arg('--runs', 25);
const SCALE_RUNS = arg('--scale-runs', 3);
const SCALE_SMALL = 800;
const SCALE_LARGE = 8000;
const SCALE_TARGET = 10;

/** A realistic file: a mix of every kind of service, with dependencies, volumes and endpoints. */
function generate(n) {
  const lines = [
    'x-common: &common',
    '  restart: unless-stopped',
    '  labels:',
    '    com.example.stack: bench',
    '  environment: &env',
    '    LOG_LEVEL: ${LOG_LEVEL:-info}',
    '    REGION: eu-west-1',
    'services:',
  ];
  const volumes = [];
  for (let i = 0; i < n; i++) {
    const name = `svc-${String(i).padStart(3, '0')}`;
    lines.push(`  ${name}:`, '    <<: *common');
    if (i % 4 === 0) lines.push('    build:', `      context: ./services/${name}`, '      args:', '        VERSION: ${VERSION:-dev}');
    else lines.push(`    image: registry.example.com/team/${name}:\${TAG:-latest}`);
    lines.push(
      '    environment:',
      '      <<: *env',
      `      SERVICE_NAME: ${name}`,
      `      DATABASE_URL: postgres://app:\${DB_PASSWORD:-secret}@db-${i % 10}:5432/app`,
    );
    if (i % 3 === 0) lines.push('    ports:', `      - "${10000 + i}:8080"`, '      - 9090');
    else lines.push('    expose: [8080]');
    if (i % 5 === 0) {
      lines.push('    volumes:', `      - data-${i}:/var/lib/data`, '      - /var/cache/app', `      - ./services/${name}/src:/app/src`);
      volumes.push(`  data-${i}:`, '    driver_opts:', '      size: 2Gi');
    }
    if (i > 0) lines.push('    depends_on:', `      svc-${String(i - 1).padStart(3, '0')}:`, '        condition: service_started');
    if (i % 2 === 0)
      lines.push(
        '    healthcheck:',
        '      test: ["CMD", "curl", "-f", "http://localhost:8080/health"]',
        '      interval: 10s',
        '      timeout: 2s',
        '      retries: 3',
      );
    if (i % 7 === 0)
      lines.push('    deploy:', '      resources:', '        limits: {cpus: "0.5", memory: 256m}', '        reservations: {cpus: "0.1", memory: 64m}');
    if (i % 20 === 19) lines.push('    restart: "no"');
    lines.push('    command: ["serve", "--port", "8080"]', '    stop_grace_period: 15s');
  }
  if (volumes.length > 0) lines.push('volumes:', ...volumes);
  lines.push('endpoints:', '  - path: /', '    service: svc-000', '    port: 8080', '  - path: /api', '    service: svc-003', '    port: 8080');
  return `${lines.join('\n')}\n`;
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const round = (x) => Math.round(x * 100) / 100;

const text = generate(SERVICES);
const files = { '/bench/.env': 'TAG=1.0.0\nVERSION=1.0.0\n' };
const options = { cwd: '/bench', env: {}, secrets: {}, fileAccess: { readFile: (p) => files[p] } };

const t0 = performance.now();
const { loadComposeTexts } = await import('../src/compose/load.ts');
const { translateCompose } = await import('../src/compose/translate.ts');
const importMs = performance.now() - t0;

let objects = 0;
const once = (source = text) => {
  const project = loadComposeTexts([{ path: '/bench/compose.yaml', text: source }], options);
  const images = Object.fromEntries(project.services.filter((s) => s.build).map((s) => [s.name, `registry.example.com/team/${s.name}:built`]));
  const t = translateCompose(project, { name: 'bench', namespace: 'dev', endpointDomain: 'apps.example.com', images });
  objects = t.objects.length;
};

/** One load and one translate of an n-service file, timed (in a fresh process: see the header). */
const timeOnce = (n) => {
  const source = generate(n);
  const c = process.cpuUsage();
  const a = performance.now();
  const project = loadComposeTexts([{ path: '/bench/compose.yaml', text: source }], options);
  const b = performance.now();
  const images = Object.fromEntries(project.services.filter((s) => s.build).map((s) => [s.name, `registry.example.com/team/${s.name}:built`]));
  translateCompose(project, { name: 'bench', namespace: 'dev', endpointDomain: 'apps.example.com', images });
  const e = performance.now();
  const used = process.cpuUsage(c);
  return { total: e - a, translate: e - b, cpu: (used.user + used.system) / 1000 };
};

// A process of scaleCase: warmed up like the runs below, it times one run and prints it.
const scaleChild = arg('--scale-case', 0);
if (scaleChild) {
  for (let i = 0; i < WARMUP; i++) once();
  console.log(JSON.stringify(timeOnce(scaleChild)));
  process.exit(0);
}

const c0 = performance.now();
once();
const firstRunMs = performance.now() - c0;
for (let i = 0; i < WARMUP; i++) once();
const times = [];
const parseTimes = [];
// Alternate the two, so background load affects both alike.
for (let i = 0; i < RUNS; i++) {
  const a = performance.now();
  once();
  times.push(performance.now() - a);
  const b = performance.now();
  parse(text, { merge: true, maxAliasCount: -1 });
  parseTimes.push(performance.now() - b);
}

const medianMs = median(times);
const mainObjects = objects;

/** Median times of SCALE_RUNS fresh processes, each timing one n-service load and translate. */
const scaleCase = (n) => {
  const runs = [];
  for (let i = 0; i < SCALE_RUNS; i++) {
    const r = spawnSync(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url), '--scale-case', String(n)], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`scale case ${n}: ${r.stderr}`);
    runs.push(JSON.parse(r.stdout));
  }
  return { total: median(runs.map((r) => r.total)), translate: median(runs.map((r) => r.translate)), cpu: median(runs.map((r) => r.cpu)) };
};
let scale;
if (!process.argv.includes('--no-scale')) {
  const small = scaleCase(SCALE_SMALL);
  const large = scaleCase(SCALE_LARGE);
  const ratio = large.total / small.total;
  scale = {
    [`services${SCALE_SMALL}Ms`]: round(small.total),
    [`services${SCALE_LARGE}Ms`]: round(large.total),
    ratio: round(ratio),
    // CPU time of the process (GC threads included): on a busy machine, wall time of the large case
    // suffers more from other processes than the small one's.
    cpu: {
      [`services${SCALE_SMALL}Ms`]: round(small.cpu),
      [`services${SCALE_LARGE}Ms`]: round(large.cpu),
      ratio: round(large.cpu / small.cpu),
    },
    // The translation alone (rollout included), without loading the file.
    translate: {
      [`services${SCALE_SMALL}Ms`]: round(small.translate),
      [`services${SCALE_LARGE}Ms`]: round(large.translate),
      ratio: round(large.translate / small.translate),
    },
  };
}
const yamlParseMs = median(parseTimes);
writeResult({
  bench: 'compose-translate',
  figures: {
    median: figure(round(medianMs), 'ms'),
    firstRun: figure(round(firstRunMs), 'ms'),
    ...(scale && {
      [`services${SCALE_SMALL}`]: figure(scale[`services${SCALE_SMALL}Ms`], 'ms'),
      [`services${SCALE_LARGE}`]: figure(scale[`services${SCALE_LARGE}Ms`], 'ms'),
      scaleRatio: figure(scale.ratio, 'x'),
    }),
  },
  baseline: { yamlParseMedian: figure(round(yamlParseMs), 'ms') },
  targets: [
    { figure: 'median', max: TARGET_MS, text: `load and translate ${SERVICES} services under ${TARGET_MS} ms` },
    ...(scale ? [{ figure: 'scaleRatio', max: SCALE_TARGET, text: `${SCALE_LARGE} services under ${SCALE_TARGET}x the time of ${SCALE_SMALL}` }] : []),
  ],
  details: {
    services: SERVICES,
    objects: mainObjects,
    bytes: text.length,
    runs: RUNS,
    importMs: round(importMs),
    toYamlParse: round(medianMs / yamlParseMs),
    scale,
  },
});
