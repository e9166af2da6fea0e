import { UsageError } from '../../base/errors.ts';
import type { CommandHandler } from '../../cli/spec.ts';
import { bashCompletion, zshCompletion } from '../../cli/completion.ts';
import { rootCommand } from '../index.ts';

export const runCompletion: CommandHandler = async (f, inv) => {
  const shell = inv.requireArg(0, 'shell');
  if (shell === 'bash') f.io.stdout.write(bashCompletion(rootCommand));
  else if (shell === 'zsh') f.io.stdout.write(zshCompletion(rootCommand));
  else throw new UsageError(`unsupported shell "${shell}" for 'devtool completion': expected bash or zsh`);
};
