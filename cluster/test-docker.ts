/**
 * The local Docker daemon for end-to-end tests of builds: `ensureDocker()` runs
 * `bash cluster/dockerd.sh up` (which installs Debian's docker.io on first use, then starts the
 * daemon or reuses a running one, without touching the cluster's networking) once per process and
 * returns the DOCKER_HOST value to give the CLI.
 */
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface LocalDocker {
  /** For DOCKER_HOST, e.g. `unix:///var/run/docker.sock`. */
  dockerHost: string;
}

const script = join(dirname(fileURLToPath(import.meta.url)), 'dockerd.sh');
let pending: Promise<LocalDocker> | undefined;

export function ensureDocker(): Promise<LocalDocker> {
  pending ??= new Promise((resolve, reject) => {
    const child = spawn('bash', [script, 'up'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.on('data', (chunk: Buffer) => process.stderr.write(chunk));
    child.on('error', reject);
    child.on('close', (code, signal) => {
      const dockerHost = stdout.trim().split('\n').pop()?.trim() ?? '';
      if (code !== 0) reject(new Error(`dockerd.sh up failed (exit ${code ?? signal}); its log lines are above`));
      else if (!/^(unix|tcp):\/\//.test(dockerHost))
        reject(new Error(`dockerd.sh up did not print a DOCKER_HOST value as its last line: ${JSON.stringify(stdout)}`));
      else resolve({ dockerHost });
    });
  });
  return pending;
}
