/**
 * Options shared by several commands, spelled once so their help reads the same everywhere.
 * Each is `as const`, so a command's option list keeps its literal names and types (OptionValues).
 */
import { MANIFEST_FILE } from '../app/manifest-file.ts';
import type { CommandInput, OptionSpec } from '../cli/spec.ts';
import type { DevTargetQuery } from '../dev/target.ts';

export const manifestFile = (description = 'Manifest path') =>
  ({
    name: 'file',
    short: 'f',
    type: 'string',
    default: MANIFEST_FILE,
    description,
  }) as const satisfies OptionSpec;

/** --file without a default: the command finds what to read when it is not given. */
export const manifestFileWithoutDefault = (description: string) => ({ name: 'file', short: 'f', type: 'string', description }) as const satisfies OptionSpec;

export const namespace = (defaultText = 'current context namespace', description = 'Namespace') =>
  ({
    name: 'namespace',
    short: 'n',
    type: 'string',
    defaultText,
    description,
  }) as const satisfies OptionSpec;

export const context = { name: 'context', short: 'c', type: 'string', defaultText: 'current context', description: 'Context' } as const satisfies OptionSpec;

/** --context on the commands of the devtool service: a service context, by its URL. */
export const serviceContext = {
  name: 'context',
  short: 'c',
  type: 'string',
  defaultText: 'current context',
  description: 'Service context (its URL) for this run',
} as const satisfies OptionSpec;
/** The options of a service command that takes no other. */
export const serviceOptions = [serviceContext] as const satisfies readonly OptionSpec[];

export const timeout = (description: string) => ({ name: 'timeout', type: 'duration', default: '5m0s', description }) as const satisfies OptionSpec;

export const wait = (description: string) => ({ name: 'wait', type: 'bool', default: 'false', description }) as const satisfies OptionSpec;

export const vars = (description: string) =>
  ({
    name: 'var',
    type: 'list',
    of: 'assignments',
    sensitive: 'assignments',
    description: `${description} (KEY=VALUE); repeatable`,
  }) as const satisfies OptionSpec;

export const envName = (defaultText = 'repository or folder name', description = 'Environment name') =>
  ({
    name: 'name',
    type: 'string',
    defaultText,
    description,
  }) as const satisfies OptionSpec;

/** The argument of a command that acts on a development container. */
export const DEV_NAME = 'The development container: a `services` entry of the manifest, or a Compose service that mounts a host folder (default: the only one)';

/** The usual trio of a command that acts on a development container. */
export const devContainerOptions = [manifestFile(), namespace('current namespace'), context] as const satisfies readonly OptionSpec[];

/** Which dev container the command line of a command with devContainerOptions names (src/dev/target.ts). */
export function devTargetQuery(inv: CommandInput<typeof devContainerOptions>): DevTargetQuery {
  return { devName: inv.args[0], file: inv.given.file, namespace: inv.opts.namespace, context: inv.opts.context, commandName: inv.commandName };
}
