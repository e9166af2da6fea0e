/**
 * Turns argv into a resolved command and an Invocation, or a UsageError that names the flag or
 * argument at fault. Built on node's util.parseArgs (no dependency, nothing to load at start-up);
 * this module adds what Go-based peers accept and users type out of habit: `--flag=false` on booleans,
 * `--` passthrough, durations with units, and `-v1` on init.
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { didYouMean, suggest } from '../base/suggest.ts';
import { parseDuration } from '../base/duration.ts';
import { UsageError } from '../base/errors.ts';
import { Invocation, type OptionValue } from './invocation.ts';
import { globalOptions, type CommandSpec, type OptionSpec } from './spec.ts';

export interface ParsedCommandLine {
  path: string[];
  spec: CommandSpec;
  /** Set when help was asked for (--help / -h); the invocation is then not checked. */
  help: boolean;
  invocation: Invocation;
}

export function parseCommandLine(argv: readonly string[], root: CommandSpec): ParsedCommandLine {
  const dashDash = argv.indexOf('--');
  const before = dashDash === -1 ? [...argv] : argv.slice(0, dashDash);
  const rest = dashDash === -1 ? [] : argv.slice(dashDash + 1);

  const { path, spec, remaining } = resolveCommand(before, root);
  const options = [...(spec.options ?? []), ...globalOptions];
  const helpAsked = remaining.includes('--help') || remaining.includes('-h');
  const label = path.length ? `devtool ${path.join(' ')}` : 'devtool';
  const hint = `run '${label} --help' for usage`;

  const words = normalizeWords(remaining, options, spec);
  let parsed: { values: Record<string, string | boolean | (string | boolean)[] | undefined>; positionals: string[] };
  try {
    parsed = parseArgs({
      args: words.args,
      options: toParseArgsOptions(options),
      strict: true,
      allowPositionals: true,
    });
  } catch (err) {
    if (helpAsked) return { path, spec, help: true, invocation: new Invocation(path, [], new Map(), rest, new Set()) };
    throw translateParseError(err, label, hint, options);
  }

  const given = new Set(Object.keys(parsed.values));
  for (const name of words.explicitFalse) given.add(name);
  const values = new Map<string, OptionValue>();
  for (const opt of options) {
    const raw = words.explicitFalse.has(opt.name) ? false : parsed.values[opt.name];
    values.set(opt.name, checkValue(opt, raw, hint));
  }
  const invocation = new Invocation(path, parsed.positionals, values, rest, given);
  if (values.get('help') === true) return { path, spec, help: true, invocation };

  checkArguments(spec, label, hint, parsed.positionals, rest, dashDash !== -1);
  return { path, spec, help: false, invocation };
}

/**
 * Walks the words to find the command and subcommand. Global options may come before the command
 * (`devtool --loglevel debug up`), so option values are skipped while looking for command names.
 */
function resolveCommand(words: string[], root: CommandSpec) {
  const path: string[] = [];
  let spec = root;
  const remaining: string[] = [];
  let descending = true;
  for (let i = 0; i < words.length; i++) {
    const word = words[i]!;
    if (word.startsWith('-') && word !== '-') {
      remaining.push(word);
      // Before the command is known, a flag of any command below counts (`devtool --context X namespace
      // list`): the command's own parse then takes it, or names it as not its own.
      const opt = findOption([...(spec.options ?? []), ...globalOptions], word) ?? (descending ? findOptionInTree(spec, word) : undefined);
      // The next word is this option's value unless the value is attached (`--name=value`, `-nvalue`).
      const attached = word.includes('=') || (!word.startsWith('--') && word.length > 2);
      if (opt && opt.type !== 'bool' && !attached && i + 1 < words.length) remaining.push(words[++i]!);
      continue;
    }
    const sub = descending ? (spec.subcommands?.find((c) => c.name === word && !c.hidden) ?? spec.subcommands?.find((c) => c.name === word)) : undefined;
    if (sub) {
      path.push(word);
      spec = sub;
      continue;
    }
    if (descending && spec === root) {
      throw new UsageError(
        `unknown command "${word}" for 'devtool'${didYouMean(
          word,
          (root.subcommands ?? []).map((c) => c.name),
        )}`,
        "run 'devtool --help' for usage",
      );
    }
    descending = false;
    remaining.push(word);
  }
  return { path, spec, remaining };
}

/**
 * An option of some command of the tree that `word` names, when every option it names there agrees
 * on taking a value or not (`-f` is `--file` in some commands, `--follow` in `logs`: none then).
 */
function findOptionInTree(root: CommandSpec, word: string): OptionSpec | undefined {
  const named: OptionSpec[] = [];
  const walk = (spec: CommandSpec) => {
    const own = findOption(spec.options ?? [], word);
    if (own) named.push(own);
    for (const sub of spec.subcommands ?? []) walk(sub);
  };
  walk(root);
  const takesValue = (o: OptionSpec) => o.type !== 'bool';
  return named.every((o) => takesValue(o) === takesValue(named[0]!)) ? named[0] : undefined;
}

export function findOption(options: readonly OptionSpec[], word: string): OptionSpec | undefined {
  if (word.startsWith('--')) {
    const name = word.slice(2).split('=')[0];
    return options.find((o) => o.name === name);
  }
  return options.find((o) => o.short !== undefined && o.short === word.slice(1, 2));
}

/** `--flag=true|false` on booleans, as Go's pflag accepts; `-v1` on init. */
function normalizeWords(words: string[], options: readonly OptionSpec[], spec: CommandSpec) {
  const explicitFalse = new Set<string>();
  const args: string[] = [];
  for (const word of words) {
    if (spec.acceptsSingleDashV1 && word === '-v1') {
      args.push('--v1');
      continue;
    }
    const m = /^--([^=]+)=(.*)$/.exec(word);
    const opt = m ? options.find((o) => o.name === m[1]) : undefined;
    if (m && opt?.type === 'bool') {
      const v = m[2]!.toLowerCase();
      if (v === 'true' || v === '1') args.push(`--${opt.name}`);
      else if (v === 'false' || v === '0') explicitFalse.add(opt.name);
      else throw new UsageError(`invalid value "${m[2]}" for flag --${opt.name}: expected true or false`);
      continue;
    }
    args.push(word);
  }
  return { args, explicitFalse };
}

function toParseArgsOptions(options: readonly OptionSpec[]): NonNullable<ParseArgsConfig['options']> {
  const out: NonNullable<ParseArgsConfig['options']> = {};
  for (const o of options) {
    out[o.name] = {
      type: o.type === 'bool' ? 'boolean' : 'string',
      ...(o.short ? { short: o.short } : {}),
      ...(o.type === 'list' ? { multiple: true } : {}),
    };
  }
  return out;
}

function checkValue(opt: OptionSpec, raw: unknown, hint: string): OptionValue {
  const flag = `--${opt.name}`;
  switch (opt.type) {
    case 'bool':
      return raw === true;
    case 'list':
      return Array.isArray(raw) ? raw.map(String) : [];
    case 'duration': {
      const text = typeof raw === 'string' ? raw : opt.default;
      if (text === undefined) return undefined as unknown as OptionValue;
      const ms = parseDuration(text);
      if (ms === undefined) {
        throw new UsageError(`invalid value "${text}" for flag ${flag}: expected a duration with a unit, like 30s, 5m or 1h30m`, hint);
      }
      return ms;
    }
    case 'string': {
      const text = typeof raw === 'string' ? raw : opt.default;
      if (text !== undefined && opt.allowed && !opt.allowed.includes(text)) {
        throw new UsageError(`invalid value "${text}" for flag ${flag}: expected one of ${opt.allowed.join(', ')}`, hint);
      }
      return text as OptionValue;
    }
  }
}

function checkArguments(spec: CommandSpec, label: string, hint: string, positionals: string[], rest: string[], sawDashDash: boolean) {
  const args = spec.args ?? [];
  const required = args.filter((a) => a.required);
  if (positionals.length < required.length) {
    const missing = required[positionals.length]!;
    throw new UsageError(`missing argument <${missing.name}> for '${label}'`, hint);
  }
  // A command with subcommands and arguments (`context [URL]`): a likely misspelt subcommand is one.
  const near =
    spec.subcommands?.length && args.length > 0 && positionals[0] !== undefined
      ? suggest(
          positionals[0],
          spec.subcommands.map((c) => c.name),
        )
      : undefined;
  if (near !== undefined && positionals[0] !== near) throw new UsageError(`unknown command "${positionals[0]}" for '${label}' (did you mean "${near}"?)`, hint);
  const variadic = args.some((a) => a.variadic);
  if (!variadic && positionals.length > args.length) {
    const extra = positionals[args.length]!;
    const what = spec.subcommands?.length
      ? `unknown command "${extra}" for '${label}'${didYouMean(
          extra,
          spec.subcommands.map((c) => c.name),
        )}`
      : `unexpected argument "${extra}" for '${label}'`;
    throw new UsageError(what, hint);
  }
  if (spec.passthrough?.required && rest.length === 0) {
    throw new UsageError(`missing ${spec.passthrough.name} after '--' for '${label}'`, hint);
  }
  if (!spec.passthrough && sawDashDash && rest.length > 0) {
    throw new UsageError(`'${label}' takes no command after '--' (got "${rest[0]}")`, hint);
  }
}

function translateParseError(err: unknown, label: string, hint: string, options: readonly OptionSpec[]): UsageError {
  const e = err as { code?: string; message?: string };
  const quoted = /'(-[^']*)'/.exec(e.message ?? '')?.[1] ?? '';
  switch (e.code) {
    case 'ERR_PARSE_ARGS_UNKNOWN_OPTION':
      return new UsageError(
        `unknown flag ${quoted} for '${label}'${didYouMean(
          quoted.replace(/^-+/, ''),
          options.map((o) => o.name),
          '--',
        )}`,
        hint,
      );
    case 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE': {
      const name = /--([\w-]+)/.exec(e.message ?? '')?.[1];
      const opt = options.find((o) => o.name === name);
      if (opt && opt.type !== 'bool') {
        // `--tail -1`: parseArgs takes a word starting with '-' for a flag, never for a value.
        const dash = /ambiguous/.test(e.message ?? '') ? `: a value starting with '-' is written --${opt.name}=VALUE` : '';
        return new UsageError(`flag --${opt.name} needs a value (${opt.type})${dash}`, hint);
      }
      return new UsageError(`flag ${name ? `--${name}` : quoted} takes no value`, hint);
    }
    default:
      return new UsageError(e.message ?? String(err), hint);
  }
}
