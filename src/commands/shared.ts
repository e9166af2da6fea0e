/** Options shared by several commands, spelled once so their help reads the same everywhere. */
import { MANIFEST_FILE } from '../app/folder.ts';
import { UnavailableError } from '../cli/errors.ts';
import type { CommandHandler, OptionSpec } from '../cli/spec.ts';

export const manifestFile = (description = 'Manifest path', defaultValue: string | undefined = MANIFEST_FILE): OptionSpec => ({
  name: 'file',
  short: 'f',
  type: 'string',
  ...(defaultValue !== undefined ? { default: defaultValue } : {}),
  description,
});

export const namespace = (defaultText = 'current context namespace', description = 'Namespace'): OptionSpec => ({
  name: 'namespace',
  short: 'n',
  type: 'string',
  defaultText,
  description,
});

export const context: OptionSpec = { name: 'context', short: 'c', type: 'string', defaultText: 'current context', description: 'Context' };

export const timeout = (description: string): OptionSpec => ({ name: 'timeout', type: 'duration', default: '5m0s', description });

export const wait = (description: string): OptionSpec => ({ name: 'wait', type: 'bool', default: 'false', description });

export const vars = (description: string): OptionSpec => ({ name: 'var', type: 'list', sensitive: 'assignments', description: `${description} (KEY=VALUE); repeatable` });

export const envName = (defaultText = 'repository or folder name', description = 'Environment name'): OptionSpec => ({
  name: 'name',
  type: 'string',
  defaultText,
  description,
});

/** The usual trio of a command that acts on a development container. */
export const devContainerOptions: readonly OptionSpec[] = [manifestFile(), namespace('current namespace'), context];

/**
 * The handler of a command whose feature is not in this build. It says so in one line and exits
 * with the "unavailable" code: a command never pretends to work.
 */
export function notBuilt(what: string): () => Promise<CommandHandler> {
  return async () => async (f, inv) => {
    throw new UnavailableError(`'devtool ${inv.commandName}' is not available yet: devtool ${f.version} does not include ${what}`);
  };
}
