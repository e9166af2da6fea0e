/** What a command handler receives once its command line has been parsed and checked. */
import { UsageError } from './errors.ts';

export type OptionValue = string | boolean | string[] | number;

export class Invocation {
  constructor(
    /** The command path, e.g. ['context', 'use']. */
    readonly path: readonly string[],
    /** Positional arguments, in order. */
    readonly args: readonly string[],
    private readonly values: ReadonlyMap<string, OptionValue>,
    /** Words after `--` (exec). */
    readonly rest: readonly string[],
    /** Options the user typed (as opposed to defaults). */
    private readonly given: ReadonlySet<string>,
  ) {}

  get commandName(): string {
    return this.path.join(' ');
  }

  string(name: string): string | undefined {
    const v = this.values.get(name);
    return typeof v === 'string' ? v : undefined;
  }

  bool(name: string): boolean {
    return this.values.get(name) === true;
  }

  list(name: string): string[] {
    const v = this.values.get(name);
    return Array.isArray(v) ? v : [];
  }

  /** Durations are parsed to milliseconds by the parser. */
  duration(name: string): number | undefined {
    const v = this.values.get(name);
    return typeof v === 'number' ? v : undefined;
  }

  /** True when the user typed the flag, even if it carries its default value. */
  has(name: string): boolean {
    return this.given.has(name);
  }

  /** The positional argument at `index`, or a usage error naming it. */
  requireArg(index: number, name: string): string {
    const v = this.args[index];
    if (v === undefined) throw new UsageError(`missing argument <${name}> for 'devtool ${this.commandName}'`);
    return v;
  }
}
