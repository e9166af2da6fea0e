// Every benchmark's result as data: bench/results/<bench>.json holds the latest run of each (git
// keeps the earlier ones), in one shape: when, on which machine, with which command line, each
// figure with its unit, the baseline measured in the same run, and the targets with whether they
// were met. Docs link these files instead of quoting figures that age.
import { readFileSync, renameSync, writeFileSync, mkdirSync } from 'node:fs';
import { arch, cpus, loadavg, release, totalmem, type } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const resultsDir = fileURLToPath(new URL('results/', import.meta.url));
const root = fileURLToPath(new URL('..', import.meta.url));

/** A measured value and its unit ("ms", "x", "%", "MB", "count"...). */
export const figure = (value, unit) => ({ value, unit });

/**
 * The record of one run. Each target names a figure and the most it may be (`max`, inclusive), with
 * the goal in words (`text`); `met` and `pass` are computed here, never claimed by the bench.
 */
export function resultRecord({ bench, command, figures, baseline = {}, targets = [], details }, { date, machine }) {
  const checked = targets.map((t) => {
    const measured = figures[t.figure];
    if (!measured) throw new Error(`${bench}: the target "${t.text}" names no figure of the run (${t.figure})`);
    return { ...t, met: measured.value <= t.max };
  });
  return {
    bench,
    date: date.toISOString(),
    command,
    machine,
    figures,
    baseline,
    targets: checked,
    pass: checked.every((t) => t.met),
    details,
  };
}

/** The machine a run measures: its cores, memory, system, Node.js, and how busy it was at the end. */
export function thisMachine() {
  let distribution = '';
  try {
    distribution = /^PRETTY_NAME="?([^"\n]*)"?$/m.exec(readFileSync('/etc/os-release', 'utf8'))?.[1] ?? '';
  } catch {}
  const cores = cpus();
  return {
    cores: cores.length,
    cpu: cores[0]?.model.trim() ?? 'unknown',
    memoryGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    os: [distribution, `${type()} ${release()} ${arch()}`].filter(Boolean).join(', '),
    node: process.version,
    loadAverage1m: Math.round(loadavg()[0] * 100) / 100,
  };
}

/** How this process was started, as one would type it from the repository's root. */
function commandLine() {
  const script = relative(root, process.argv[1] ?? '');
  return ['node', ...process.execArgv, script, ...process.argv.slice(2)].join(' ');
}

/** Writes bench/results/<bench>.json (whole or not at all) and prints the record on stdout. */
export function writeResult(input) {
  const record = resultRecord({ command: commandLine(), ...input }, { date: new Date(), machine: thisMachine() });
  const text = `${JSON.stringify(record, null, 2)}\n`;
  mkdirSync(resultsDir, { recursive: true });
  const file = join(resultsDir, `${record.bench}.json`);
  writeFileSync(`${file}.partial`, text);
  renameSync(`${file}.partial`, file);
  process.stdout.write(text);
  process.stderr.write(`${relative(root, file)} written\n`);
  return record;
}
