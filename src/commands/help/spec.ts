import type { CommandSpec } from '../../cli/spec.ts';

export const helpCommand: CommandSpec = {
  name: 'help',
  summary: 'Display full help, or the help of one command',
  description: 'Without a command, prints the help of every command and subcommand; with one, its help, as `devtool COMMAND --help` does.',
  args: [{ name: 'command', variadic: true, description: 'The command and subcommand words, e.g. `context use`' }],
  load: async () => (await import('./run.ts')).runHelp,
};
