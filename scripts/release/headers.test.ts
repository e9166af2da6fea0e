import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { executableFormat, executableKind } from './headers.ts';

function elf(machine: number): Buffer {
  const b = Buffer.alloc(64);
  b.write('\x7fELF', 0, 'latin1');
  b[4] = 2; // 64-bit
  b[5] = 1; // little-endian
  b.writeUInt16LE(machine, 18);
  return b;
}

function machO(cpu: number): Buffer {
  const b = Buffer.alloc(32);
  b.writeUInt32LE(0xfeedfacf, 0);
  b.writeUInt32LE(cpu, 4);
  return b;
}

function pe(machine: number): Buffer {
  const b = Buffer.alloc(256);
  b.write('MZ', 0, 'latin1');
  b.writeUInt32LE(0x80, 0x3c);
  b.write('PE\0\0', 0x80, 'latin1');
  b.writeUInt16LE(machine, 0x84);
  return b;
}

test('ELF, Mach-O and PE headers, with their architecture', () => {
  assert.deepEqual(executableKind(elf(0x3e)), { format: 'elf', arch: 'x64' });
  assert.deepEqual(executableKind(elf(0xb7)), { format: 'elf', arch: 'arm64' });
  assert.deepEqual(executableKind(machO(0x01000007)), { format: 'mach-o', arch: 'x64' });
  assert.deepEqual(executableKind(machO(0x0100000c)), { format: 'mach-o', arch: 'arm64' });
  assert.deepEqual(executableKind(pe(0x8664)), { format: 'pe', arch: 'x64' });
  assert.deepEqual(executableKind(elf(0x28)), { format: 'elf', arch: '0x28' });
});

test('anything else is no executable', () => {
  assert.equal(executableKind(Buffer.from('#!/bin/sh\necho hi\n')), undefined);
  assert.equal(executableKind(Buffer.from('MZ')), undefined);
  assert.equal(executableKind(Buffer.alloc(0)), undefined);
});

test('the running Node is an ELF of this machine', () => {
  assert.deepEqual(executableKind(readFileSync(process.execPath).subarray(0, 4096)), { format: 'elf', arch: process.arch });
});

test('each platform’s executable format', () => {
  assert.equal(executableFormat('linux'), 'elf');
  assert.equal(executableFormat('darwin'), 'mach-o');
  assert.equal(executableFormat('win32'), 'pe');
});
