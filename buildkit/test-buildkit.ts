/**
 * The local BuildKit daemon for end-to-end tests: `ensureBuildkit()` runs `bash buildkit/buildkitd.sh
 * up` (which builds buildkitd and devtool-buildkit if needed, then starts the daemon or reuses a
 * running healthy one) once per process and returns its address, `tcp://127.0.0.1:1234`. Images it
 * builds are pushed to the local cluster's registry (localhost:5000): call `ensureCluster()` first.
 */
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const script = join(dirname(fileURLToPath(import.meta.url)), 'buildkitd.sh');

let pending: Promise<string> | undefined;

/** Starts (or reuses) the local buildkitd, once per process; resolves to its address. */
export function ensureBuildkit(): Promise<string> {
  pending ??= up();
  return pending;
}

function up(): Promise<string> {
  return new Promise((resolve, reject) => {
    // No stdin; the script's progress (and a cold Go build's) is streamed to our stderr.
    const child = spawn('bash', [script, 'up'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => {
      stdout += chunk;
      process.stderr.write(chunk);
    });
    child.stderr.on('data', (chunk: Buffer) => process.stderr.write(chunk));
    child.on('error', reject);
    child.on('close', (code, signal) => {
      if (code !== 0) {
        reject(new Error(`buildkitd.sh up failed (exit ${code ?? signal}); its log lines are above`));
        return;
      }
      const address = stdout.trim().split('\n').pop()?.trim() ?? '';
      if (!address.startsWith('tcp://')) {
        reject(new Error(`buildkitd.sh up did not print an address as its last line: ${JSON.stringify(stdout)}`));
        return;
      }
      resolve(address);
    });
  });
}
