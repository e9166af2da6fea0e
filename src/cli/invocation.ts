/**
 * The parsed and checked command line, options by name as the parser knows them. Only src/cli
 * reads it: a handler receives `input(spec.options)`, its options typed from its spec.
 */
import { UsageError } from '../base/errors.ts';
import { parseAssignments } from './assignments.ts';
import { optionKey, type CommandInput, type OptionSpec } from './spec.ts';

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

  /**
   * A list of assignments as a map (src/cli/assignments.ts), or a usage error. Checked as the
   * handler is given its options rather than by the parser, so that devtool.log, open by then,
   * records the error.
   */
  assignments(name: string): Record<string, string> {
    return parseAssignments(this.list(name), `--${name}`, `run '${['devtool', ...this.path].join(' ')} --help' for usage`);
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

  /** What the handler receives: `options` (the command's) typed, under their camelCase keys. */
  input<Options extends readonly OptionSpec[]>(options: Options): CommandInput<Options> {
    const opts: Record<string, OptionValue | Record<string, string> | undefined> = {};
    const given: Record<string, OptionValue | Record<string, string> | undefined> = {};
    for (const o of options) {
      const value =
        o.type === 'bool'
          ? this.bool(o.name)
          : o.type === 'list'
            ? o.of === 'assignments'
              ? this.assignments(o.name)
              : this.list(o.name)
            : o.type === 'duration'
              ? this.duration(o.name)
              : this.string(o.name);
      opts[optionKey(o.name)] = value;
      if (this.has(o.name)) given[optionKey(o.name)] = value;
    }
    return {
      commandName: this.commandName,
      args: this.args,
      rest: this.rest,
      opts: opts as CommandInput<Options>['opts'],
      given: given as CommandInput<Options>['given'],
      requireArg: (index, name) => this.requireArg(index, name),
    };
  }

  /** The positional argument at `index`, or a usage error naming it. */
  requireArg(index: number, name: string): string {
    const v = this.args[index];
    if (v === undefined) throw new UsageError(`missing argument <${name}> for 'devtool ${this.commandName}'`);
    return v;
  }
}
