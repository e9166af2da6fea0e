/**
 * The declarative command surface. Every command of the reference is one CommandSpec: the parser,
 * the help text and shell completion are all generated from these, so they cannot disagree.
 * Specs are cheap to load; the code that runs a command is imported lazily (see `load`).
 */
import type { Factory } from '../factory.ts';
import type { Invocation } from './invocation.ts';

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
  required?: boolean;
  variadic?: boolean;
}

export type CommandHandler = (f: Factory, inv: Invocation) => Promise<number | void>;

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
  /** Loads the code that runs the command. Absent on a pure group (it then prints its help). */
  load?: () => Promise<CommandHandler>;
  /** Not listed in help (internal commands). */
  hidden?: boolean;
  /** Takes `-v1` as written (init), which would otherwise be read as `-v 1`. */
  acceptsSingleDashV1?: boolean;
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
  if (spec.subcommands?.length && !spec.load) parts.push('<command>');
  else if (spec.subcommands?.length) parts.push('[command]');
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
