/**
 * What machine an executable is for, read from its header: ELF (Linux), Mach-O (macOS) or PE
 * (Windows), and its architecture. The release test checks each platform package's programs with
 * it, since no macOS or Windows machine runs them here.
 */

export interface ExecutableKind {
  format: 'elf' | 'mach-o' | 'pe';
  /** Node's name: x64 or arm64; anything else as a hex machine number. */
  arch: string;
}

const ELF_MACHINE = new Map([
  [0x3e, 'x64'],
  [0xb7, 'arm64'],
]);
const MACH_O_CPU = new Map([
  [0x01000007, 'x64'],
  [0x0100000c, 'arm64'],
]);
const PE_MACHINE = new Map([
  [0x8664, 'x64'],
  [0xaa64, 'arm64'],
]);

const name = (table: ReadonlyMap<number, string>, n: number) => table.get(n) ?? `0x${n.toString(16)}`;

/** The kind of executable `head` (its first 4 KB at least) starts, or undefined for none of the three. */
export function executableKind(head: Buffer): ExecutableKind | undefined {
  if (head.length >= 20 && head.readUInt32BE(0) === 0x7f454c46) {
    // e_ident[EI_DATA] 1: little-endian; e_machine at 18.
    const machine = head[5] === 1 ? head.readUInt16LE(18) : head.readUInt16BE(18);
    return { format: 'elf', arch: name(ELF_MACHINE, machine) };
  }
  // 64-bit Mach-O, little-endian (every macOS machine Go builds for): magic 0xfeedfacf, cputype at 4.
  if (head.length >= 8 && head.readUInt32LE(0) === 0xfeedfacf) return { format: 'mach-o', arch: name(MACH_O_CPU, head.readUInt32LE(4)) };
  if (head.length >= 64 && head.toString('latin1', 0, 2) === 'MZ') {
    const pe = head.readUInt32LE(0x3c);
    if (head.length >= pe + 6 && head.toString('latin1', pe, pe + 4) === 'PE\0\0') return { format: 'pe', arch: name(PE_MACHINE, head.readUInt16LE(pe + 4)) };
  }
  return undefined;
}

/** The format a platform's executables have. */
export function executableFormat(platform: string): ExecutableKind['format'] {
  return platform === 'darwin' ? 'mach-o' : platform === 'win32' ? 'pe' : 'elf';
}
