/**
 * The declarative command surface. Every command of devtool is one CommandSpec: the parser,
 * the help text and shell completion are all generated from these, so they cannot disagree.
 * Specs are cheap to load; the code that runs a command is imported lazily (see `load`).
 */
import type { Factory } from '../factory.ts';

export type OptionType = 'string' | 'bool' | 'list' | 'duration';

export interface OptionSpec {
  /** Long name without the dashes. */
  name: string;
  short?: string;
  type: OptionType;
  /** Default as shown in help; also the parsed value when the flag is absent (strings and durations). */
  default?: string;
  /** Default shown in help when it is not a literal value ("current context"). */
  defaultText?: string;
  description: string;
  /** The only accepted values, for string options. */
  allowed?: readonly string[];
  /**
   * What each value of a list option is: `assignments` are KEY=VALUE with KEY a variable name, and
   * the handler reads them as a map, a later flag winning (src/cli/assignments.ts).
   */
  of?: 'assignments';
  /** Hidden from help (aliases kept for compatibility). */
  hidden?: boolean;
  /**
   * The value may be secret, and devtool.log records it as *** (src/cli/command-line.ts): the
   * whole value (`value`: --token), or the value of each KEY=VALUE (`assignments`: --var, --env).
   */
  sensitive?: 'value' | 'assignments';
}

export interface ArgSpec {
  name: string;
  /** What the argument names (docs/cli.md; help shows only the synopsis). */
  description?: string;
  required?: boolean;
  variadic?: boolean;
}

/**
 * The value type of each option, by option, derived from the option list of a command declared
 * `as const satisfies readonly OptionSpec[]` (literal names and types kept):
 *   bool -> boolean; list -> string[], or Record<string, string> for a list of assignments;
 *   string -> string | undefined, or string with a default, or the `allowed` values' union;
 *   duration -> number (milliseconds), | undefined without a default.
 * Keys are the option names in camelCase: --dry-run is `dryRun`, --no-cache `noCache`.
 * A name that is not an option of the command is then a compile error (src/cli/options.test.ts).
 */
export type OptionValues<Options extends readonly OptionSpec[]> = {
  readonly [O in Options[number] as CamelCase<O['name']>]: ValueOf<O>;
};

/** 'dry-run' -> 'dryRun' (the key of an option in OptionValues; optionKey below at run time). */
export type CamelCase<Name extends string> = Name extends `${infer Head}-${infer Tail}` ? `${Head}${Capitalize<CamelCase<Tail>>}` : Name;

type ValueOf<O extends OptionSpec> = O['type'] extends 'bool'
  ? boolean
  : O['type'] extends 'list'
    ? O extends { of: 'assignments' }
      ? Record<string, string>
      : string[]
    : O['type'] extends 'duration'
      ? number | NoDefault<O>
      : (O extends { allowed: readonly (infer A extends string)[] } ? A : string) | NoDefault<O>;

/** undefined when the option has no default (its value is then undefined unless the user typed it). */
type NoDefault<O extends OptionSpec> = O extends { default: string } ? never : undefined;

/** The key of an option in a handler's `opts`: its name in camelCase (CamelCase above, at run time). */
export function optionKey(name: string): string {
  return name.replace(/-(.)/g, (_, c: string) => c.toUpperCase());
}

/** What a handler receives: the parsed command line, options typed from the command's spec. */
export interface CommandInput<Options extends readonly OptionSpec[] = readonly []> {
  /** The command path as typed, e.g. 'context use' (for messages). */
  readonly commandName: string;
  /** Positional arguments, in order. */
  readonly args: readonly string[];
  /** Words after `--` (exec). */
  readonly rest: readonly string[];
  /** Every option of the command, with its default when the user did not type it. */
  readonly opts: OptionValues<Options>;
  /** Only the options the user typed (`given.file` is undefined when --file was not typed, even though `opts.file` has its default). */
  readonly given: Partial<OptionValues<Options>>;
  /** The positional argument at `index`, or a usage error naming it. */
  readonly requireArg: (index: number, name: string) => string;
}

/** Runs a command; `Options` is `typeof` the command's option list (a handler without options omits it). */
export type CommandHandler<Options extends readonly OptionSpec[] = readonly []> = (f: Factory, inv: CommandInput<Options>) => Promise<number | void>;

export interface CommandSpec {
  name: string;
  /** One line, shown in command lists. */
  summary: string;
  /** Longer help; defaults to the summary. */
  description?: string;
  args?: readonly ArgSpec[];
  options?: readonly OptionSpec[];
  subcommands?: readonly CommandSpec[];
  /** Accepts `-- COMMAND...` after its arguments (exec). */
  passthrough?: { name: string; required: boolean };
  /** Examples shown at the end of help. */
  examples?: readonly string[];
  /**
   * Loads the code that runs the command. Absent on a pure group (it then prints its help).
   * A handler that reads options is typed by them: declare such a command with `command()`.
   */
  load?: () => Promise<CommandHandler<readonly OptionSpec[]>>;
  /** Not listed in help (internal commands). */
  hidden?: boolean;
  /** Takes `-v1` as written (init), which would otherwise be read as `-v 1`. */
  acceptsSingleDashV1?: boolean;
}

/** A CommandSpec whose handler reads its options typed (OptionValues<Options>). */
export interface TypedCommandSpec<Options extends readonly OptionSpec[]> extends Omit<CommandSpec, 'options' | 'load'> {
  options: Options;
  load: () => Promise<CommandHandler<Options>>;
}

/**
 * A command whose handler reads options: checks, at compile time only, that the handler `load`
 * returns takes this option list (`CommandHandler<typeof options>`). Returns the spec unchanged.
 */
export function command<Options extends readonly OptionSpec[]>(spec: TypedCommandSpec<Options>): CommandSpec {
  return spec as unknown as CommandSpec;
}

/** The one option every command takes, besides --help. */
export const globalOptions: readonly OptionSpec[] = [
  {
    name: 'loglevel',
    type: 'string',
    default: 'warn',
    allowed: ['debug', 'info', 'warn', 'error'],
    description: 'Amount of information output',
  },
  { name: 'help', short: 'h', type: 'bool', description: 'Show help for the command' },
];

/** The synopsis line: `devtool up [devName] [flags]`. */
export function synopsis(path: readonly string[], spec: CommandSpec): string {
  const parts = ['devtool', ...path];
  // Optional either way: a command group alone prints its help.
  if (spec.subcommands?.length) parts.push('[command]');
  for (const a of spec.args ?? []) {
    const name = a.variadic ? `${a.name}...` : a.name;
    parts.push(a.required ? `<${name}>` : `[${name}]`);
  }
  if ((spec.options?.length ?? 0) > 0 || globalOptions.length) parts.push('[flags]');
  if (spec.passthrough) {
    const p = `-- ${spec.passthrough.name}`;
    parts.push(spec.passthrough.required ? p : `[${p}]`);
  }
  return parts.join(' ');
}

/** Every visible command and subcommand under `root`, depth first, with its path. */
export function visibleCommands(root: CommandSpec): { path: string[]; spec: CommandSpec }[] {
  const out: { path: string[]; spec: CommandSpec }[] = [];
  const walk = (path: string[], spec: CommandSpec) => {
    for (const c of spec.subcommands ?? []) {
      if (c.hidden) continue;
      out.push({ path: [...path, c.name], spec: c });
      walk([...path, c.name], c);
    }
  };
  walk([], root);
  return out;
}
