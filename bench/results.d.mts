// The types of results.mjs, for the TypeScript that imports it (its unit test).
export interface Figure {
  value: number;
  unit: string;
}
export interface Target {
  figure: string;
  max: number;
  text: string;
}
export interface Machine {
  cores: number;
  cpu: string;
  memoryGiB: number;
  os: string;
  node: string;
  loadAverage1m: number;
}
export interface ResultInput {
  bench: string;
  command: string;
  figures: Record<string, Figure>;
  baseline?: Record<string, Figure>;
  targets?: Target[];
  details?: unknown;
}
export interface ResultRecord {
  bench: string;
  date: string;
  command: string;
  machine: Machine;
  figures: Record<string, Figure>;
  baseline: Record<string, Figure>;
  targets: (Target & { met: boolean })[];
  pass: boolean;
  details: unknown;
}
export function figure(value: number, unit: string): Figure;
export function resultRecord(input: ResultInput, at: { date: Date; machine: Machine }): ResultRecord;
export function thisMachine(): Machine;
export function writeResult(input: Omit<ResultInput, 'command'> & { command?: string }): ResultRecord;
