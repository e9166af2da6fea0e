import type { CommandSpec } from '../../cli/spec.ts';

export const versionCommand: CommandSpec = {
  name: 'version',
  summary: 'Display the installed version',
  description: 'Prints `devtool version X.Y.Z`.',
  load: async () => async (f) => {
    f.io.stdout.write(`devtool version ${f.version}\n`);
  },
};
