/**
 * Registry credentials the way Docker keeps them: `$DOCKER_CONFIG/config.json` (default
 * `~/.docker/config.json`), `auths` entries (`auth` = base64 of user:password, or username and
 * password, or an identity token), and credential helpers (`credHelpers` per registry,
 * `credsStore` for all), run as `docker-credential-<name> get` with the registry on stdin, as
 * the Docker CLI does. No entry means anonymous access (the local registry needs none).
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { userHome } from '../base/platform.ts';
import { DOCKER_HUB } from './reference.ts';

export interface RegistryCredentials {
  readonly username?: string;
  readonly password?: string;
  /** An OAuth refresh token (Docker's `identitytoken`), used instead of a password. */
  readonly identityToken?: string;
}

interface AuthEntry {
  auth?: string;
  username?: string;
  password?: string;
  identitytoken?: string;
}

interface ConfigFile {
  auths?: Record<string, AuthEntry>;
  credHelpers?: Record<string, string>;
  credsStore?: string;
}

/** Docker Hub's credentials are stored under this historical key. */
const HUB_KEY = 'https://index.docker.io/v1/';

export function dockerConfigPath(env: Readonly<NodeJS.ProcessEnv>): string {
  return join(env.DOCKER_CONFIG || join(userHome(env), '.docker'), 'config.json');
}

export class DockerCredentials {
  private readonly cache = new Map<string, Promise<RegistryCredentials | undefined>>();

  constructor(private readonly config: ConfigFile) {}

  static load(env: Readonly<NodeJS.ProcessEnv>): DockerCredentials {
    try {
      return new DockerCredentials(JSON.parse(readFileSync(dockerConfigPath(env), 'utf8')) as ConfigFile);
    } catch {
      // No file (or not JSON): anonymous everywhere, as Docker itself behaves.
      return new DockerCredentials({});
    }
  }

  /** Credentials for a registry host, or undefined for anonymous access. */
  forRegistry(registry: string): Promise<RegistryCredentials | undefined> {
    let pending = this.cache.get(registry);
    if (!pending) {
      pending = this.lookup(registry);
      this.cache.set(registry, pending);
    }
    return pending;
  }

  private async lookup(registry: string): Promise<RegistryCredentials | undefined> {
    const key = registry === DOCKER_HUB ? HUB_KEY : registry;
    const helper = this.config.credHelpers?.[key] ?? this.config.credHelpers?.[registry] ?? this.config.credsStore;
    if (helper) {
      const fromHelper = await runHelper(helper, key).catch(() => undefined);
      if (fromHelper) return fromHelper;
    }
    const entry = findAuth(this.config.auths ?? {}, registry);
    return entry ? decodeAuth(entry) : undefined;
  }
}

/** An `auths` entry: keys may be a bare host or a URL (`https://host/v1/`). */
export function findAuth(auths: Readonly<Record<string, AuthEntry>>, registry: string): AuthEntry | undefined {
  const wanted = registry === DOCKER_HUB ? ['index.docker.io', DOCKER_HUB, 'registry-1.docker.io'] : [registry];
  for (const [key, entry] of Object.entries(auths)) {
    const host = key.replace(/^https?:\/\//, '').replace(/\/.*$/, '');
    if (wanted.includes(host)) return entry;
  }
  return undefined;
}

export function decodeAuth(entry: AuthEntry): RegistryCredentials | undefined {
  if (entry.identitytoken) return { identityToken: entry.identitytoken, ...(entry.username ? { username: entry.username } : {}) };
  if (entry.username || entry.password) return { username: entry.username ?? '', password: entry.password ?? '' };
  if (entry.auth) {
    const text = Buffer.from(entry.auth, 'base64').toString('utf8');
    const colon = text.indexOf(':');
    if (colon > 0) return { username: text.slice(0, colon), password: text.slice(colon + 1) };
  }
  return undefined;
}

/** `docker-credential-NAME get`: {"Username", "Secret"}; Username "<token>" means an identity token. */
function runHelper(name: string, serverUrl: string): Promise<RegistryCredentials | undefined> {
  return new Promise((resolve, reject) => {
    const child = spawn(`docker-credential-${name}`, ['get'], { stdio: ['pipe', 'pipe', 'ignore'] });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (out += c));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) return resolve(undefined);
      try {
        const r = JSON.parse(out) as { Username?: string; Secret?: string };
        if (!r.Secret) return resolve(undefined);
        resolve(r.Username === '<token>' ? { identityToken: r.Secret } : { username: r.Username ?? '', password: r.Secret });
      } catch {
        resolve(undefined);
      }
    });
    child.stdin.end(serverUrl);
  });
}

/** The X-Registry-Auth header's JSON for a push (`{}` for anonymous access). */
export function registryAuthHeader(registry: string, creds: RegistryCredentials | undefined): Record<string, string> {
  if (!creds) return {};
  const serveraddress = registry === DOCKER_HUB ? HUB_KEY : registry;
  if (creds.identityToken) return { identitytoken: creds.identityToken, serveraddress };
  return { username: creds.username ?? '', password: creds.password ?? '', serveraddress };
}
