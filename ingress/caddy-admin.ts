/**
 * Caddy's admin API on a unix socket (shared with the Caddy container through an emptyDir, never a
 * TCP port: the proxy runs on the node's network, where any local process could reach a port).
 */
import { request } from 'node:http';
import type { CaddyConfig } from './translate.ts';

/** Replaces Caddy's whole configuration (POST /load); Caddy keeps the running one if the new one fails. */
export function loadConfig(socketPath: string, config: CaddyConfig, timeoutMs = 30_000): Promise<void> {
  const body = JSON.stringify(config);
  return new Promise((resolve, reject) => {
    const req = request(
      // An empty Host: on a unix socket Caddy admits only that (its allowed origins are [""]).
      { socketPath, path: '/load', method: 'POST', setHost: false, headers: { Host: '', 'Content-Type': 'application/json' }, timeout: timeoutMs },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => {
          text += c;
        });
        res.on('end', () => {
          if (res.statusCode === 200) resolve();
          else reject(new Error(`Caddy refused the configuration (HTTP ${res.statusCode}): ${text.trim().slice(0, 500)}`));
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error(`Caddy's admin API at ${socketPath} did not answer in ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end(body);
  });
}
