// The README's tour pictures, from a real run: the demo application (examples/demo) deployed on the
// local cluster, a dev container brought up, edited, and put back, each session written as an SVG
// to docs/images/. Rerun it after a change of what these commands print:
//
//   node --import tsx scripts/readme-images.ts
//
// It starts the local cluster (or finds it running), builds this tree, and pushes this tree's agent
// image to localhost:5000/readme-images (DEVTOOL_BIN_IMAGE: another one). Everything happens in the
// namespace devtool-tour, deleted at the end, with a devtool home of its own.
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { closeSync, cpSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type SessionStep, terminalSvg } from './terminal-svg.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
const NAMESPACE = 'devtool-tour';
const images = join(root, 'docs/images');

function must(command: string, args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): string {
  const r = spawnSync(command, args, { encoding: 'utf8', maxBuffer: 64 << 20, stdio: ['ignore', 'pipe', 'inherit'], ...options });
  if (r.status !== 0) throw new Error(`${command} ${args.join(' ')} exited ${r.status}`);
  return r.stdout.trim().split('\n').pop() ?? '';
}

const work = mkdtempSync(join(tmpdir(), 'readme-images-'));
const demo = join(work, 'demo');
cpSync(join(root, 'examples/demo'), demo, { recursive: true });

const kubeconfig = must('bash', [join(root, 'cluster/cluster.sh'), 'up']);
must(process.execPath, [join(root, 'scripts/build.mjs')]);
const agent = process.env.DEVTOOL_BIN_IMAGE || must('bash', [join(root, 'agent/build.sh'), 'all', 'localhost:5000/readme-images']);
const env = {
  ...process.env,
  KUBECONFIG: kubeconfig,
  DEVTOOL_HOME: join(work, 'home'),
  DEVTOOL_DISABLE_ANALYTICS: '1',
  DEVTOOL_ENDPOINT_DOMAIN: 'devtool.test',
  DEVTOOL_BIN_IMAGE: agent,
  NO_COLOR: '1',
};
const kubectl = (...args: string[]) => must('bash', [join(root, 'cluster/cluster.sh'), 'kubectl', ...args]);
kubectl('delete', 'namespace', NAMESPACE, '--ignore-not-found', '--wait=true', '--timeout=3m');

/** Output as it would read in the user's own checkout: the temporary folder is the home folder. */
const shown = (output: string) => output.replaceAll(work, '~');

/** Runs a command line as a user would type it in the demo's folder; its output as the terminal shows it. */
function typed(command: string): SessionStep {
  const file = join(work, 'output');
  const fd = openSync(file, 'w');
  const devtool = `node ${join(root, 'dist/devtool.cjs')}`;
  const r = spawnSync('bash', ['-c', command.replace(/^devtool /, `${devtool} `)], { cwd: demo, env, stdio: ['ignore', fd, fd] });
  closeSync(fd);
  const output = shown(readFileSync(file, 'utf8'));
  if (r.status !== 0) throw new Error(`${command} exited ${r.status}:\n${output}`);
  return { command, output };
}

/** `devtool up web` in the background, as in a second terminal, until it is ready. */
async function upUntilReady(): Promise<{ step: SessionStep; up: ChildProcess }> {
  const file = join(work, 'up-output');
  const fd = openSync(file, 'w');
  const up = spawn(process.execPath, [join(root, 'dist/devtool.cjs'), 'up', 'web'], { cwd: demo, env, stdio: ['ignore', fd, fd] });
  closeSync(fd);
  for (const until = Date.now() + 300_000; Date.now() < until; await new Promise((r) => setTimeout(r, 500))) {
    const output = shown(readFileSync(file, 'utf8'));
    if (/Forwarding until interrupted/.test(output)) return { step: { command: 'devtool up web', output }, up };
    if (up.exitCode !== null) throw new Error(`devtool up web exited ${up.exitCode}:\n${output}`);
  }
  throw new Error(`devtool up web was not ready in 5 min:\n${readFileSync(file, 'utf8')}`);
}

async function untilServed(text: string): Promise<void> {
  for (const until = Date.now() + 30_000; Date.now() < until; await new Promise((r) => setTimeout(r, 300))) {
    const r = spawnSync(process.execPath, [join(root, 'dist/devtool.cjs'), 'exec', 'web', '--', 'cat', '/usr/share/nginx/html/index.html'], {
      cwd: demo,
      env,
      encoding: 'utf8',
    });
    if (r.stdout.includes(text)) return;
  }
  throw new Error(`the edit "${text}" did not reach the dev container in 30 s`);
}

function write(name: string, title: string, steps: SessionStep[]): void {
  writeFileSync(join(images, name), terminalSvg(title, steps));
  console.log(`wrote docs/images/${name}`);
}

let up: ChildProcess | undefined;
try {
  write('tour-deploy.svg', 'Deploy the demo application', [
    typed(`devtool context use devtool-local --namespace ${NAMESPACE} --registry localhost:5000`),
    typed('devtool deploy --wait'),
    typed('devtool endpoints'),
  ]);
  const started = await upUntilReady();
  up = started.up;
  const edit = typed("echo '<h1>Edited on my laptop</h1>' > site/index.html");
  await untilServed('Edited on my laptop');
  write('tour-up.svg', 'A dev container: file sync, forwards, a shell', [
    started.step,
    typed('devtool exec web -- sh -c \'echo "$GREETING"\''),
    edit,
    typed('devtool exec web -- cat /usr/share/nginx/html/index.html'),
    typed('devtool status web'),
  ]);
  write('tour-down.svg', 'Put everything back', [typed('devtool down web'), typed('devtool destroy --volumes')]);
} finally {
  up?.kill('SIGTERM');
  spawnSync('bash', [join(root, 'cluster/cluster.sh'), 'kubectl', 'delete', 'namespace', NAMESPACE, '--ignore-not-found', '--wait=false'], {
    stdio: 'ignore',
  });
  rmSync(work, { recursive: true, force: true });
}
