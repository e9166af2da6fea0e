/**
 * The secrets of one dev environment's file sync: for each end, a Syncthing identity (certificate,
 * key, device ID), an API key and a GUI password. Each end has its own pair, so the container,
 * which holds the remote end's, cannot reach the laptop's Syncthing with it. Made by
 * `devtool-agent keygen`, the same generator the agent's configuration is documented with
 * (agent/README.md), so both ends' certificates are alike.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { DevtoolError } from '../base/errors.ts';
import type { HostCommand } from '../binaries/host-binary.ts';

export interface SyncIdentity {
  readonly certificate: string;
  readonly key: string;
  readonly deviceID: string;
}

/** One Syncthing: who it is, and what opens its REST API (the key) and its GUI (the password). */
export interface SyncEnd extends SyncIdentity {
  readonly apiKey: string;
  readonly password: string;
}

export interface SyncKeys {
  readonly local: SyncEnd;
  readonly remote: SyncEnd;
}

interface KeygenOutput {
  syncthing: SyncIdentity;
  apiKey: string;
  guiPassword: string;
}

export async function generateSyncKeys(agentBinary: HostCommand): Promise<SyncKeys> {
  const pair = await Promise.all([keygen(agentBinary), keygen(agentBinary)]);
  // The laptop gets the identity that wins Syncthing's ties (see shortIdLess).
  const [a, b] = shortIdLess(pair[0].syncthing.deviceID, pair[1].syncthing.deviceID) ? pair : [pair[1], pair[0]];
  return { local: syncEnd(a), remote: syncEnd(b) };
}

function syncEnd(k: KeygenOutput): SyncEnd {
  return { ...k.syncthing, apiKey: k.apiKey, password: k.guiPassword };
}

/**
 * `sync-keys.json` as stored. Files written before each end had its own pair hold one `apiKey` and
 * `password` beside the two identities: both ends keep sharing them, because the dev container
 * was configured with them (its agent Secret) and must keep working until `down`, which forgets
 * the file; the next `up` then makes a pair per end. Throws on anything else.
 */
export function parseSyncKeys(text: string): SyncKeys {
  const raw = JSON.parse(text) as { local?: Partial<SyncEnd>; remote?: Partial<SyncEnd>; apiKey?: unknown; password?: unknown };
  const end = (e: Partial<SyncEnd> | undefined, name: string): SyncEnd => {
    const shared = typeof raw.apiKey === 'string' && typeof raw.password === 'string' ? { apiKey: raw.apiKey, password: raw.password } : {};
    const merged = { ...shared, ...e };
    for (const field of ['certificate', 'key', 'deviceID', 'apiKey', 'password'] as const) {
      if (typeof merged[field] !== 'string' || merged[field] === '') throw new Error(`${name}.${field} is missing`);
    }
    return merged as SyncEnd;
  };
  return { local: end(raw.local, 'local'), remote: end(raw.remote, 'remote') };
}

const BASE32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

/**
 * Whether device `a` sorts before `b` by Syncthing's short ID (the first 64 bits of the device
 * ID, big-endian; the ID's text is their base32). Syncthing breaks a tie between two concurrent
 * versions (a link, whose modification time it does not keep, or files with equal times) by the
 * version vectors, and with two devices the one with the smaller short ID wins once it holds the
 * higher counter of its own (protocol.Vector.Compare). The first pass gives the laptop's version
 * exactly that (first-pass.ts), so the laptop must be the smaller one: then its files and links
 * win every tie.
 */
export function shortIdLess(a: string, b: string): boolean {
  const digits = (id: string) => [...id.replaceAll('-', '').slice(0, 13)].map((c) => BASE32.indexOf(c.toUpperCase()));
  const [x, y] = [digits(a), digits(b)];
  for (let i = 0; i < 13; i++) if (x[i] !== y[i]) return x[i]! < y[i]!;
  return false;
}

async function keygen(agentBinary: HostCommand): Promise<KeygenOutput> {
  try {
    const { stdout } = await promisify(execFile)(agentBinary.file, [...agentBinary.args, 'keygen']);
    return JSON.parse(stdout) as KeygenOutput;
  } catch (err) {
    throw new DevtoolError(`cannot generate the file sync keys with ${agentBinary.file}: ${(err as Error).message.split('\n')[0]}`);
  }
}
