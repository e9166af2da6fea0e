/**
 * The bootstrap's tar archive (bootstrap.ts), written straight into large buffers ("slabs") that
 * go out as they are: each file is read into the slab right after its header, and a slab leaves
 * `headroom` bytes free at its start for the exec's channel number (kube/exec.ts), so no byte of
 * the tree is copied again on its way to the socket.
 *
 * Why not tar-stream (which builds Docker contexts, image/build-context.ts): for 10,000 files / 100 MB
 * it spent 0.9 to 1.4 s of the CLI's CPU in the copy (a stream and a Buffer per file, the garbage
 * collector, then two more copies of every byte to make WebSocket messages), and the CLI's main
 * thread was the busiest process of the copy on a 2-core machine (profiled: docs/sync.md). The
 * format needed here is small: ustar headers for directories, regular files and symlinks, and
 * a PAX record for what ustar cannot hold (long names, sizes from 8 GiB), as Go's archive/tar in
 * the agent reads it.
 */
import { closeSync, openSync, readlinkSync, readSync } from 'node:fs';
import { join } from 'node:path';
import { syncedMode } from '../base/platform.ts';
import type { BootstrapStats, Item } from './bootstrap.ts';

const BLOCK = 512;
/** Files up to this size are read whole into the slab, after their header; bigger ones in pieces. */
export const READ_WHOLE_MAX = 4 * 1024 * 1024;

export interface TarWriterOptions {
  /** Bytes of a slab (bigger where one small file needs more). */
  slabBytes: number;
  /** Bytes left free at the start of each slab (for the receiver's framing). */
  headroom: number;
  /** Takes a filled slab (the caller's from then on); resolves when more may be written. */
  emit(slab: Buffer): Promise<void>;
}

/** Writes `items` (listTree) of `root` as one tar archive, ended by its two zero blocks. */
export async function writeTar(root: string, items: readonly Item[], o: TarWriterOptions): Promise<BootstrapStats> {
  const stats: BootstrapStats = { files: 0, dirs: 0, symlinks: 0, bytes: 0, skipped: 0 };
  let slab = Buffer.allocUnsafeSlow(o.slabBytes);
  let pos = o.headroom;
  /** Makes room for `need` more bytes: the slab goes out and a new one (big enough) comes. */
  const room = async (need: number) => {
    if (pos + need <= slab.length) return;
    if (pos > o.headroom) await o.emit(slab.subarray(0, pos));
    slab = Buffer.allocUnsafeSlow(Math.max(o.slabBytes, o.headroom + need));
    pos = o.headroom;
  };
  /** Writes the PAX header `h` needs, if any, then its own; room must have been made. */
  const putHeader = (h: Header, pax: Buffer | undefined) => {
    if (pax) {
      pos = writeHeader(slab, pos, { name: `PaxHeader/${h.name.slice(-80)}`, type: 'x', mode: 0o644, size: pax.length, mtime: h.mtime });
      pax.copy(slab, pos);
      pos = zeroPad(slab, pos + pax.length, pax.length);
    }
    pos = writeHeader(slab, pos, h);
  };
  const headerBytes = (pax: Buffer | undefined) => (pax ? BLOCK + padded(pax.length) : 0) + BLOCK;
  const header = async (h: Header) => {
    const pax = paxRecords(h);
    await room(headerBytes(pax));
    putHeader(h, pax);
  };

  for (const { rel, stat } of items) {
    const path = join(root, rel);
    const common = { mode: syncedMode(stat.mode, stat.isDirectory()), mtime: Math.floor(stat.mtimeMs / 1000) };
    if (stat.isDirectory()) {
      await header({ ...common, name: `${rel}/`, type: '5', size: 0 });
      stats.dirs++;
    } else if (stat.isSymbolicLink()) {
      let target: string;
      try {
        target = readlinkSync(path);
      } catch {
        stats.skipped++;
        continue;
      }
      await header({ ...common, name: rel, type: '2', size: 0, linkname: target });
      stats.symlinks++;
    } else {
      let fd: number;
      try {
        fd = openSync(path, 'r');
      } catch {
        stats.skipped++; // unreadable or gone: Syncthing reports or skips it the same way
        continue;
      }
      try {
        if (stat.size <= READ_WHOLE_MAX) {
          // Read first, into the slab after room for the headers, which then give the size read:
          // a file that shrank since listTree goes as it is now, one that grew as far as listed
          // (its new mtime makes Syncthing send the rest).
          const h: Header = { ...common, name: rel, type: '0', size: stat.size };
          const pax = paxRecords(h); // the same for any size up to READ_WHOLE_MAX
          const before = headerBytes(pax);
          await room(before + padded(stat.size));
          const size = readInto(fd, slab, pos + before, stat.size);
          putHeader({ ...h, size }, pax);
          pos = zeroPad(slab, pos + size, size);
          stats.bytes += size;
        } else {
          await header({ ...common, name: rel, type: '0', size: stat.size });
          for (let left = stat.size; left > 0; ) {
            await room(1);
            const got = readInto(fd, slab, pos, Math.min(left, slab.length - pos));
            if (got === 0) throw new Error(`${rel} changed size while it was read`);
            pos += got;
            left -= got;
          }
          const rest = padded(stat.size) - stat.size;
          await room(rest);
          pos = zeroPad(slab, pos, stat.size);
          stats.bytes += stat.size;
        }
        stats.files++;
      } finally {
        closeSync(fd);
      }
    }
  }
  await room(2 * BLOCK);
  slab.fill(0, pos, pos + 2 * BLOCK);
  await o.emit(slab.subarray(0, pos + 2 * BLOCK));
  return stats;
}

/** Reads up to `max` bytes at `offset`; fewer only at the end of the file. */
function readInto(fd: number, buf: Buffer, offset: number, max: number): number {
  let got = 0;
  while (got < max) {
    const n = readSync(fd, buf, offset + got, max - got, null);
    if (n === 0) break;
    got += n;
  }
  return got;
}

interface Header {
  name: string;
  /** ustar type flag: '0' file, '5' directory, '2' symlink, 'x' PAX record. */
  type: '0' | '5' | '2' | 'x';
  mode: number;
  size: number;
  /** Seconds since the epoch. */
  mtime: number;
  linkname?: string;
}

const MAX_OCTAL_11 = 8 ** 11 - 1;

function padded(n: number): number {
  return Math.ceil(n / BLOCK) * BLOCK;
}

/** Zeroes what follows `size` bytes of data, ending at `end`, up to the next multiple of a block. */
function zeroPad(buf: Buffer, end: number, size: number): number {
  const rest = padded(size) - size;
  buf.fill(0, end, end + rest);
  return end + rest;
}

/** Where `name` fits ustar's name and prefix fields, the split; undefined when it needs PAX. */
function splitName(name: string): { name: string; prefix: string } | undefined {
  if (Buffer.byteLength(name) <= 100) return { name, prefix: '' };
  for (let i = name.indexOf('/'); i !== -1; i = name.indexOf('/', i + 1)) {
    const prefix = name.slice(0, i);
    const rest = name.slice(i + 1);
    if (Buffer.byteLength(prefix) > 155) break;
    if (rest.length > 0 && Buffer.byteLength(rest) <= 100) return { name: rest, prefix };
  }
  return undefined;
}

/** The PAX extended header data `h` needs, if it needs one (POSIX.1-2001 "length key=value\n"). */
function paxRecords(h: Header): Buffer | undefined {
  const records: string[] = [];
  if (!splitName(h.name)) records.push(record('path', h.name));
  if (h.linkname !== undefined && Buffer.byteLength(h.linkname) > 100) records.push(record('linkpath', h.linkname));
  if (h.size > MAX_OCTAL_11) records.push(record('size', String(h.size)));
  return records.length > 0 ? Buffer.from(records.join('')) : undefined;
}

function record(key: string, value: string): string {
  const body = ` ${key}=${value}\n`;
  let length = Buffer.byteLength(body);
  // The length counts its own digits.
  while (String(length).length + Buffer.byteLength(body) !== length) length = String(length).length + Buffer.byteLength(body);
  return `${length}${body}`;
}

/** Writes one ustar header block at `at`; returns the offset after it. */
function writeHeader(buf: Buffer, at: number, h: Header): number {
  buf.fill(0, at, at + BLOCK);
  const split = splitName(h.name) ?? { name: h.name.slice(-100), prefix: '' };
  buf.write(split.name, at, 100, 'utf8');
  octal(buf, at + 100, 8, h.mode);
  octal(buf, at + 108, 8, 0); // uid
  octal(buf, at + 116, 8, 0); // gid
  octal(buf, at + 124, 12, h.size > MAX_OCTAL_11 ? 0 : h.size);
  octal(buf, at + 136, 12, Math.min(Math.max(h.mtime, 0), MAX_OCTAL_11));
  buf.write(h.type, at + 156, 1, 'latin1');
  if (h.linkname !== undefined) buf.write(h.linkname, at + 157, 100, 'utf8');
  buf.write('ustar\u000000', at + 257, 8, 'latin1');
  buf.write(split.prefix, at + 345, 155, 'utf8');
  // The checksum is the byte sum of the header with its own field read as eight spaces.
  buf.fill(0x20, at + 148, at + 156);
  let sum = 0;
  for (let i = at; i < at + BLOCK; i++) sum += buf[i]!;
  octal(buf, at + 148, 7, sum);
  return at + BLOCK;
}

/** `value` in octal, zero-padded to width-1 digits and NUL-terminated. */
function octal(buf: Buffer, at: number, width: number, value: number): void {
  buf.write(`${value.toString(8).padStart(width - 1, '0')}\u0000`, at, width, 'latin1');
}
