import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const script = fileURLToPath(new URL('elf.mjs', import.meta.url));
const elf = (args: string[]) => spawnSync(process.execPath, [script, ...args], { encoding: 'utf8' });

/** The first 64 bytes of a 64-bit ELF file of MACHINE (e_machine), little- or big-endian. */
function header(machine: number, bigEndian = false): Buffer {
  const b = Buffer.alloc(64);
  b.write('\x7fELF', 0, 'latin1');
  b[4] = 2; // 64-bit
  b[5] = bigEndian ? 2 : 1;
  if (bigEndian) b.writeUInt16BE(machine, 18);
  else b.writeUInt16LE(machine, 18);
  return b;
}

test('machine: x86-64, aarch64, another machine by number, a file that is no ELF', () => {
  const dir = mkdtempSync(join(tmpdir(), 'elf-'));
  try {
    writeFileSync(join(dir, 'amd64'), header(0x3e));
    writeFileSync(join(dir, 'arm64'), header(0xb7));
    writeFileSync(join(dir, 's390x'), header(0x16, true));
    writeFileSync(join(dir, 'script'), '#!/bin/sh\necho this is not a program at all\n');
    const r = elf(['machine', ...['amd64', 'arm64', 's390x', 'script'].map((f) => join(dir, f))]);
    assert.equal(r.status, 0, r.stderr);
    assert.deepEqual(r.stdout.trim().split('\n'), [
      `x86-64 ${join(dir, 'amd64')}`,
      `aarch64 ${join(dir, 'arm64')}`,
      `machine-22 ${join(dir, 's390x')}`,
      `not-elf ${join(dir, 'script')}`,
    ]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('find: the ELF files of one machine under a folder, symbolic links not followed', () => {
  const dir = mkdtempSync(join(tmpdir(), 'elf-'));
  try {
    mkdirSync(join(dir, 'usr', 'bin'), { recursive: true });
    writeFileSync(join(dir, 'usr', 'bin', 'left'), header(0x3e));
    writeFileSync(join(dir, 'usr', 'bin', 'node'), header(0xb7));
    symlinkSync('left', join(dir, 'usr', 'bin', 'link'));
    const r = elf(['find', dir, 'x86-64']);
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout, `${join(dir, 'usr', 'bin', 'left')}\n`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a wrong use is refused with the usage line', () => {
  const r = elf(['find', '/']);
  assert.equal(r.status, 2);
  assert.equal(r.stderr, 'usage: elf.mjs machine FILE... | elf.mjs find DIR MACHINE\n');
});
