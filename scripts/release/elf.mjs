// ELF machines of files, from their headers (a few bytes, nothing run):
//   node scripts/release/elf.mjs machine FILE...   one line per file: "<machine> FILE" (x86-64, aarch64,
//                                                 another e_machine number, or "not-elf")
//   node scripts/release/elf.mjs find DIR MACHINE  every regular file under DIR that is an ELF of MACHINE,
//                                                 one path a line (symbolic links are not followed)
// The release's image build uses `find` to prove an arm64 root file system holds no amd64 program, and
// its check uses `machine` on the main binaries of each image.
import { closeSync, lstatSync, openSync, readdirSync, readSync } from 'node:fs';
import { join } from 'node:path';

const MACHINES = new Map([
  [0x3e, 'x86-64'],
  [0xb7, 'aarch64'],
]);

/** The ELF machine of a file, or "not-elf". */
function machineOf(path) {
  const header = Buffer.alloc(20);
  const fd = openSync(path, 'r');
  let read;
  try {
    read = readSync(fd, header, 0, header.length, 0);
  } finally {
    closeSync(fd);
  }
  if (read < 20 || header.readUInt32BE(0) !== 0x7f454c46) return 'not-elf';
  // e_ident[EI_DATA]: 1 little-endian, 2 big-endian; e_machine is the half-word at offset 18.
  const machine = header[5] === 2 ? header.readUInt16BE(18) : header.readUInt16LE(18);
  return MACHINES.get(machine) ?? `machine-${machine}`;
}

function* regularFiles(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* regularFiles(path);
    else if (entry.isFile() && lstatSync(path).size >= 20) yield path;
  }
}

const [mode, ...args] = process.argv.slice(2);
if (mode === 'machine' && args.length > 0) {
  for (const path of args) console.log(`${machineOf(path)} ${path}`);
} else if (mode === 'find' && args.length === 2) {
  const [dir, machine] = args;
  for (const path of regularFiles(dir)) if (machineOf(path) === machine) console.log(path);
} else {
  console.error('usage: elf.mjs machine FILE... | elf.mjs find DIR MACHINE');
  process.exit(2);
}
