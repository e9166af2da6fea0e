/** Test helpers: a tar-writer archive in one buffer, and tar-stream (an independent reader) reading it back. */
import { extract } from 'tar-stream';
import type { BootstrapStats, Item } from '../bootstrap.ts';
import { writeTar } from '../tar-writer.ts';

export interface ReadEntry {
  type: string;
  size: number;
  mode: number;
  mtime: number;
  linkname?: string;
  body: Buffer;
}

/** The archive as the exec would carry it: every slab checked for its free first byte, then joined. */
export async function writeTarToBuffer(root: string, items: readonly Item[], slabBytes = 64 * 1024): Promise<{ tar: Buffer; stats: BootstrapStats; slabs: number }> {
  const parts: Buffer[] = [];
  const stats = await writeTar(root, items, {
    slabBytes,
    headroom: 1,
    emit: async (slab) => {
      slab[0] = 0xee; // what the exec writes there: it must not be part of the archive
      parts.push(Buffer.from(slab.subarray(1)));
    },
  });
  return { tar: Buffer.concat(parts), stats, slabs: parts.length };
}

export function readTar(tar: Buffer): Promise<Map<string, ReadEntry>> {
  const seen = new Map<string, ReadEntry>();
  return new Promise((resolve, reject) => {
    const x = extract();
    x.on('entry', (h, stream, next) => {
      const body: Buffer[] = [];
      stream.on('data', (d: unknown) => body.push(d as Buffer));
      stream.on('end', () => {
        seen.set(h.name, { type: h.type!, size: h.size ?? 0, mode: h.mode ?? 0, mtime: h.mtime?.getTime() ?? 0, ...(h.linkname ? { linkname: h.linkname } : {}), body: Buffer.concat(body) });
        next();
      });
    });
    x.on('finish', () => resolve(seen));
    x.on('error', reject);
    x.end(tar);
  });
}
