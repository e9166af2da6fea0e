/**
 * The secrets of one dev environment's file sync: a Syncthing identity (certificate, key, device
 * ID) for each end, and the API key and GUI password both ends share (`status --info` shows one
 * user and password). Made by `devtool-agent keygen`, the same generator the agent's contract is
 * documented with (agent/README.md), so both ends' certificates are alike.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { DevtoolError } from '../cli/errors.ts';

export interface SyncIdentity {
  readonly certificate: string;
  readonly key: string;
  readonly deviceID: string;
}

export interface SyncKeys {
  readonly local: SyncIdentity;
  readonly remote: SyncIdentity;
  readonly apiKey: string;
  readonly password: string;
}

interface KeygenOutput {
  syncthing: SyncIdentity;
  apiKey: string;
  guiPassword: string;
}

export async function generateSyncKeys(agentBinary: string): Promise<SyncKeys> {
  const [a, b] = await Promise.all([keygen(agentBinary), keygen(agentBinary)]);
  return { local: a.syncthing, remote: b.syncthing, apiKey: a.apiKey, password: a.guiPassword };
}

async function keygen(agentBinary: string): Promise<KeygenOutput> {
  try {
    const { stdout } = await promisify(execFile)(agentBinary, ['keygen']);
    return JSON.parse(stdout) as KeygenOutput;
  } catch (err) {
    throw new DevtoolError(`cannot generate the file sync keys with ${agentBinary}: ${(err as Error).message.split('\n')[0]}`);
  }
}
