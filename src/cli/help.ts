/** Help text, generated from the command specs so it always matches what the parser accepts. */
import { globalOptions, synopsis, visibleCommands, type CommandSpec, type OptionSpec } from './spec.ts';

export function commandHelp(path: readonly string[], spec: CommandSpec): string {
  const lines: string[] = [];
  lines.push(spec.description ?? spec.summary, '', 'Usage:', `  ${synopsis(path, spec)}`);
  const subs = (spec.subcommands ?? []).filter((c) => !c.hidden);
  if (subs.length) {
    lines.push('', 'Commands:');
    const width = Math.max(...subs.map((c) => c.name.length)) + 2;
    for (const c of subs) lines.push(`  ${c.name.padEnd(width)}${c.summary}`);
  }
  const options = (spec.options ?? []).filter((o) => !o.hidden);
  if (options.length) lines.push('', 'Options:', ...optionLines(options));
  lines.push('', 'Global options:', ...optionLines(globalOptions));
  if (spec.examples?.length) lines.push('', 'Examples:', ...spec.examples.map((e) => `  ${e}`));
  if (subs.length) lines.push('', `Run 'devtool ${[...path, '<command>'].join(' ')} --help' for more about a command.`);
  return `${lines.join('\n')}\n`;
}

export function rootHelp(root: CommandSpec): string {
  const commands = (root.subcommands ?? []).filter((c) => !c.hidden);
  const width = Math.max(...commands.map((c) => c.name.length)) + 2;
  return [
    'devtool: live development environments on Kubernetes.',
    '',
    'Usage:',
    '  devtool [options] <command> [subcommand] [parameters]',
    '',
    'Commands:',
    ...commands.map((c) => `  ${c.name.padEnd(width)}${c.summary}`),
    '',
    'Global options:',
    ...optionLines(globalOptions),
    '',
    "Run 'devtool <command> --help' for more about a command, or 'devtool help' for every command.",
    '',
  ].join('\n');
}

/** `devtool help`: the root help followed by the full help of every command and subcommand. */
export function fullHelp(root: CommandSpec): string {
  const parts = [rootHelp(root)];
  for (const { path, spec } of visibleCommands(root)) parts.push(`${'='.repeat(8)} devtool ${path.join(' ')} ${'='.repeat(8)}\n${commandHelp(path, spec)}`);
  return parts.join('\n');
}

function optionLines(options: readonly OptionSpec[]): string[] {
  const heads = options.map((o) => `${o.short ? `-${o.short}, ` : '    '}--${o.name} ${o.type}`);
  const width = Math.max(...heads.map((h) => h.length)) + 3;
  return options.map((o, i) => `  ${heads[i]!.padEnd(width)}${o.description}${defaultNote(o)}`);
}

function defaultNote(o: OptionSpec): string {
  if (o.defaultText) return ` (default: ${o.defaultText})`;
  if (o.default !== undefined) return ` (default: ${o.default})`;
  if (o.type === 'bool') return ' (default: false)';
  return '';
}
