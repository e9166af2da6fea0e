import { UsageError } from '../../base/errors.ts';
import { commandHelp, fullHelp } from '../../cli/help.ts';
import type { CommandHandler, CommandSpec } from '../../cli/spec.ts';
import { rootCommand } from '../index.ts';

export const runHelp: CommandHandler = async (f, inv) => {
  if (inv.args.length === 0) {
    f.io.stdout.write(fullHelp(rootCommand));
    return;
  }
  let spec: CommandSpec = rootCommand;
  for (const word of inv.args) {
    const next = spec.subcommands?.find((c) => c.name === word);
    if (!next) throw new UsageError(`unknown command "${inv.args.join(' ')}" for 'devtool help'`, "run 'devtool help' for every command");
    spec = next;
  }
  f.io.stdout.write(commandHelp(inv.args, spec));
};
