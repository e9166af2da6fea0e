/**
 * The first pass of a session: whatever the dev container did to the synced files while no `up`
 * ran, this machine's files are neither overwritten nor deleted. docs/sync.md ("The first pass")
 * states the rules; this module keeps them.
 *
 * How: the local folder starts `sendonly`, so nothing the container has can reach it yet. Both
 * ends scan and exchange their indexes (indexesExchanged, exact to the sequence number). Then the
 * local end's need list, read whole from one state of the index (readSettled), says, path by path, where the container's version would replace or delete
 * a local one. Each such local path gets a new version without a change of content (a newer
 * modification time, for directories a mode flip and back, for links an equivalent spelling of the
 * target): it is then concurrent with the container's, newer, so it wins; the container keeps its
 * own content as a `.sync-conflict-` copy that comes back here, and a delete there loses to the
 * laptop's file (Syncthing: a modification beats a deletion). Only then does the folder turn
 * `sendreceive`. Anything the container changes after that is an ordinary live change, and a
 * concurrent one still leaves a conflict copy, so no order of events overwrites a local file
 * without a copy.
 *
 * A path the container has and this machine lacks is either the container's own (it arrives) or
 * one deleted here since the container last had it, which this machine's index alone tells
 * (planFirstPass's `index`); where the container changed such a file meanwhile, its version is
 * kept as a conflict copy and the deletion stands (deleted-here.ts).
 *
 * Syncthing's own "override" is not used: it would delete every file that exists only in the
 * container (build outputs, `node_modules`), and its new versions dominate the container's, so
 * the container's changes would be lost without a copy.
 */
import { chmodSync, lstatSync, lutimesSync, readlinkSync, renameSync, rmSync, symlinkSync, utimesSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { NeedItem } from './rest.ts';

export type LocalKind = 'file' | 'dir' | 'symlink' | 'other';

export interface LocalEntry {
  kind: LocalKind;
  size: number;
  mtimeNs: bigint;
}

/** What is at a folder-relative path here: an entry, nothing, or a place Syncthing cannot write (a parent is a link or a file). */
export type LocalLookup = (rel: string) => LocalEntry | 'absent' | 'unreachable';

/** How a local path gets a newer version with its content unchanged. */
export type KeepHow = 'touch' | 'flip-mode' | 'respell-link';

export interface KeepLocal {
  path: string;
  how: KeepHow;
  /** The modification time to give it: after the container's version, and not before now. */
  mtimeMs: number;
  /** What the container's version would have done to it. */
  container: 'changed' | 'deleted';
}

/** A file or link this machine deleted while the container changed it: the deletion stands, the container's version becomes a conflict copy. */
export interface DeletedHere {
  path: string;
  /** The name the container's version takes there, and then here. */
  conflictCopy: string;
}

export interface FirstPassPlan {
  keep: KeepLocal[];
  /** Paths only the container has, or that it made again after it had this machine's deletion: they arrive here. */
  arriving: string[];
  deletedHere: DeletedHere[];
}

/**
 * This machine's index entry of a path (`/rest/db/file`'s `local`), for the paths absent here
 * that the container has. Only this machine's own database says it: the container's word is
 * never asked.
 */
export type LocalIndex = ReadonlyMap<string, Pick<NeedItem, 'deleted' | 'version'>>;

const FILE = 'FILE_INFO_TYPE_FILE';
const DIRECTORY = 'FILE_INFO_TYPE_DIRECTORY';
const SYMLINK = 'FILE_INFO_TYPE_SYMLINK';

/**
 * The need items absent here whose local index entry planFirstPass asks for: files and links the
 * container has, whose version another device than the one that made it had changed too (this
 * machine, perhaps). A file only the container ever changed is the container's: it arrives
 * without a question, so a tree it generated costs no request per file (one takes about 5 ms on
 * a busy machine). A directory is left to Syncthing (one the container filled comes back with
 * what it holds).
 */
export function indexedCandidates(need: readonly NeedItem[], lookup: LocalLookup): string[] {
  const changedByAnother = (i: NeedItem) => (i.version ?? []).some((c) => !c.startsWith(`${i.modifiedBy}:`));
  return need.filter((i) => !i.deleted && (i.type === FILE || i.type === SYMLINK) && changedByAnother(i) && lookup(i.name) === 'absent').map((i) => i.name);
}

/**
 * Pure: which local paths the container's versions (the local end's need list) would replace or
 * delete, and how each keeps its content. A container version that is this machine's file with
 * the same size and modification time (the container re-indexed the same files, e.g. after a
 * reset) only updates metadata: left alone. A directory the container kept only changes mode or
 * time: left alone too.
 */
export function planFirstPass(need: readonly NeedItem[], lookup: LocalLookup, nowMs: number, index: LocalIndex = new Map()): FirstPassPlan {
  const keep: KeepLocal[] = [];
  const arriving: string[] = [];
  const deletedHere: DeletedHere[] = [];
  for (const item of need) {
    const local = lookup(item.name);
    if (local === 'unreachable') continue;
    if (local === 'absent') {
      if (item.deleted) continue;
      // Deleted here since the container last had this machine's version: the container's version
      // does not include that deletion (its vector is not at or above the deletion's).
      const mine = index.get(item.name);
      if (mine?.deleted && !versionAtLeast(item.version ?? [], mine.version ?? []))
        deletedHere.push({ path: item.name, conflictCopy: conflictCopyName(item.name, nowMs, item.modifiedBy ?? 'unknown') });
      else arriving.push(item.name);
      continue;
    }
    if (!item.deleted && sameContent(item, local)) continue;
    const how = local.kind === 'dir' ? 'flip-mode' : local.kind === 'symlink' ? 'respell-link' : local.kind === 'file' ? 'touch' : undefined;
    if (!how) continue; // a socket or a device: Syncthing does not sync those
    const mtimeMs = Math.max(nowMs, (modifiedMs(item.modified) ?? 0) + 1000);
    keep.push({ path: item.name, how, mtimeMs, container: item.deleted ? 'deleted' : 'changed' });
  }
  return { keep, arriving, deletedHere };
}

/** Whether version vector `a` (Syncthing's `["SHORTID:counter", ...]`) has seen every change `b` has. */
export function versionAtLeast(a: readonly string[], b: readonly string[]): boolean {
  const counters = new Map(a.map((c) => [c.slice(0, c.lastIndexOf(':')), BigInt(c.slice(c.lastIndexOf(':') + 1))]));
  return b.every((c) => (counters.get(c.slice(0, c.lastIndexOf(':'))) ?? 0n) >= BigInt(c.slice(c.lastIndexOf(':') + 1)));
}

/** Syncthing's name for a conflict copy: `dir/name.sync-conflict-YYYYMMDD-HHMMSS-<device>.ext` (the time in UTC). */
export function conflictCopyName(path: string, nowMs: number, modifiedBy: string): string {
  const slash = path.lastIndexOf('/');
  const base = path.slice(slash + 1);
  const dot = base.lastIndexOf('.');
  const [stem, ext] = dot > 0 ? [base.slice(0, dot), base.slice(dot)] : [base, ''];
  const t = new Date(nowMs).toISOString(); // 2026-11-24T08:50:00.000Z
  const stamp = `${t.slice(0, 10).replaceAll('-', '')}-${t.slice(11, 19).replaceAll(':', '')}`;
  return `${path.slice(0, slash + 1)}${stem}.sync-conflict-${stamp}-${modifiedBy}${ext}`;
}

function sameContent(item: NeedItem, local: LocalEntry): boolean {
  if (item.type === DIRECTORY) return local.kind === 'dir';
  if (item.type === FILE && local.kind === 'file') return item.size === local.size && modifiedNs(item.modified) === local.mtimeNs;
  // A link's content is its target, which the need list does not carry: it counts as changed.
  return false;
}

/** Nanoseconds since the epoch of an RFC 3339 time with up to nine fraction digits (Go's time.Time JSON). */
export function modifiedNs(rfc3339: string | undefined): bigint | undefined {
  if (!rfc3339) return undefined;
  const m = /^(.*T\d\d:\d\d:\d\d)(?:\.(\d{1,9}))?(Z|[+-]\d\d:\d\d)$/.exec(rfc3339);
  if (!m) return undefined;
  const seconds = Date.parse(`${m[1]}${m[3]}`);
  if (Number.isNaN(seconds)) return undefined;
  return BigInt(seconds) * 1_000_000n + BigInt((m[2] ?? '').padEnd(9, '0'));
}

function modifiedMs(rfc3339: string | undefined): number | undefined {
  const ns = modifiedNs(rfc3339);
  return ns === undefined ? undefined : Number(ns / 1_000_000n);
}

/**
 * The local lookup of planFirstPass on the real file system. A path below a link or a file is
 * unreachable: Syncthing never writes through a link, and lstat would follow a linked parent out
 * of the folder.
 */
export function fsLookup(root: string): LocalLookup {
  const parentOf = (rel: string) => rel.slice(0, Math.max(0, rel.lastIndexOf('/')));
  const dirs = new Map<string, boolean>([['', true]]);
  const isRealDir = (rel: string): boolean => {
    let known = dirs.get(rel);
    if (known === undefined) {
      known = isRealDir(parentOf(rel)) && (lstatSync(join(root, rel), { throwIfNoEntry: false })?.isDirectory() ?? false);
      dirs.set(rel, known);
    }
    return known;
  };
  return (rel) => {
    const parent = parentOf(rel);
    if (!isRealDir(parent)) return lstatSync(join(root, parent), { throwIfNoEntry: false }) ? 'unreachable' : 'absent';
    const st = lstatSync(join(root, rel), { bigint: true, throwIfNoEntry: false });
    if (!st) return 'absent';
    const kind: LocalKind = st.isFile() ? 'file' : st.isDirectory() ? 'dir' : st.isSymbolicLink() ? 'symlink' : 'other';
    return { kind, size: Number(st.size), mtimeNs: st.mtimeNs };
  };
}

/**
 * Gives each planned path its new version. Files need one scan; directories and links two (the
 * mode or link spelling changes, is scanned, and changes back, is scanned again: their content and
 * mode end as they were, with a version newer than the container's). `scan` rescans the given
 * paths of the folder and resolves once the local end has indexed them.
 */
export async function keepLocal(root: string, keep: readonly KeepLocal[], scan: (paths: string[]) => Promise<void>): Promise<void> {
  const twoStep = keep.filter((k) => k.how !== 'touch');
  for (const k of keep) if (k.how === 'touch') setMtime(join(root, k.path), k.mtimeMs, false);
  const restore: (() => void)[] = [];
  try {
    for (const k of twoStep) restore.push(k.how === 'flip-mode' ? flipMode(join(root, k.path), k.mtimeMs) : respellLink(join(root, k.path), k.mtimeMs));
    await scan(keep.map((k) => k.path));
  } finally {
    // Put modes and link spellings back even when the scan failed: the content never changed.
    for (const undo of restore) undo();
  }
  if (twoStep.length > 0) await scan(twoStep.map((k) => k.path));
}

function setMtime(path: string, mtimeMs: number, link: boolean): void {
  const t = new Date(mtimeMs);
  const atime = lstatSync(path).atime;
  if (link) lutimesSync(path, atime, t);
  else utimesSync(path, atime, t);
}

/** Flips the directory's world-execute bit (a version Syncthing sees); the returned function flips it back. */
function flipMode(path: string, mtimeMs: number): () => void {
  const mode = lstatSync(path).mode & 0o7777;
  chmodSync(path, mode ^ 0o001);
  return () => {
    chmodSync(path, mode);
    setMtime(path, mtimeMs, false);
  };
}

/**
 * Replaces the link, atomically, by one whose target is spelled differently but names the same
 * thing (`./x` for `x`, `/./a` for `/a`); the returned function restores the original spelling.
 * The link never goes missing and always resolves as before.
 */
function respellLink(path: string, mtimeMs: number): () => void {
  const target = readlinkSync(path);
  const respelled = target.startsWith('/') ? `/.${target}` : `./${target}`;
  replaceLink(path, respelled, mtimeMs);
  return () => replaceLink(path, target, mtimeMs);
}

function replaceLink(path: string, target: string, mtimeMs: number): void {
  const tmp = join(dirname(path), `.devtool-link-${process.pid}-${Date.now()}`);
  symlinkSync(target, tmp);
  try {
    setMtime(tmp, mtimeMs, true);
    renameSync(tmp, path);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw err;
  }
}

/** One line for the terminal about the files deleted here that the container had changed (`kept` of them renamed there), or undefined for none. */
export function deletedHereSummary(local: string, kept: number): string | undefined {
  if (kept === 0) return undefined;
  return (
    `first sync of ${local}: the dev container had changed ${kept} path(s) deleted here while no 'devtool up' ran: deleted there too; ` +
    `the container's versions come back as *.sync-conflict-* copies (paths in devtool.log)`
  );
}

/** One line for the terminal about what the first pass did, or undefined when the container had changed nothing here. */
export function firstPassSummary(local: string, plan: FirstPassPlan): string | undefined {
  const changed = plan.keep.filter((k) => k.container === 'changed').length;
  const deleted = plan.keep.length - changed;
  if (plan.keep.length === 0) return undefined;
  const parts = [changed > 0 ? `changed ${changed} path(s)` : '', deleted > 0 ? `deleted ${deleted} path(s)` : ''].filter(Boolean).join(' and ');
  const copies = changed > 0 ? `; the container's versions come back as *.sync-conflict-* copies next to them` : '';
  return (
    `first sync of ${local}: while no 'devtool up' ran, the dev container ${parts} that this machine has: kept this machine's ` +
    `version${copies} (paths in devtool.log)`
  );
}
