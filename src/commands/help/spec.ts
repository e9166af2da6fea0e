import type { CommandSpec } from '../../cli/spec.ts';

export const helpCommand: CommandSpec = {
  name: 'help',
  summary: 'Display full help, or the help of one command',
  args: [{ name: 'command', variadic: true }],
  load: async () => (await import('./run.ts')).runHelp,
};
