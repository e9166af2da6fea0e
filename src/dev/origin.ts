/**
 * Where dev mode was activated, in words: the ORIGIN_ANNOTATION `up` writes next to the folder
 * hash ("host:/path/of/the/folder"). The hash decides whose dev container it is; the origin only
 * makes the messages say which folder to go to, and lets `down` take over a dev container whose
 * folder is gone from this machine (deleted or moved), which no other folder could end before.
 */
import { existsSync } from 'node:fs';
import { hostname } from 'node:os';
import { ORIGIN_ANNOTATION } from './names.ts';

export function formatOrigin(folder: string, host = hostname()): string {
  return `${host}:${folder}`;
}

/** What otherOrigin needs to know of the machine it runs on. */
export function thisMachine(): { host: string; exists(path: string): boolean } {
  return { host: hostname(), exists: existsSync };
}

/**
 * `where`, for messages: "folder /a/b", "folder /a/b on machine h", or "another folder or machine".
 * `gone`: on this machine, and its folder (`localFolder`) no longer exists: `down` may take it over.
 */
export type OtherOrigin = { where: string; gone: false; localFolder?: string } | { where: string; gone: true; localFolder: string };

/** The origin recorded on an original Deployment, as seen from this machine. */
export function originOf(d: { metadata: { annotations?: Record<string, string> } } | undefined): OtherOrigin {
  return otherOrigin(d?.metadata.annotations?.[ORIGIN_ANNOTATION], thisMachine());
}

/**
 * Reads another folder's origin annotation (absent when an older devtool activated it). The host
 * is what precedes the first ':' (host names have none; paths may).
 */
export function otherOrigin(origin: string | undefined, here: { host: string; exists(path: string): boolean }): OtherOrigin {
  const colon = origin?.indexOf(':') ?? -1;
  if (origin === undefined || colon <= 0) return { where: 'another folder or machine', gone: false };
  const host = origin.slice(0, colon);
  const folder = origin.slice(colon + 1);
  if (host !== here.host) return { where: `folder ${folder} on machine ${host}`, gone: false };
  if (here.exists(folder)) return { where: `folder ${folder}`, gone: false, localFolder: folder };
  return { where: `folder ${folder} (which no longer exists)`, gone: true, localFolder: folder };
}
