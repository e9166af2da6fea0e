import type { CommandSpec } from '../../cli/spec.ts';

export const versionCommand: CommandSpec = {
  name: 'version',
  summary: 'Display the installed version',
  load: async () => async (f) => {
    f.io.stdout.write(`devtool version ${f.version}\n`);
  },
};
