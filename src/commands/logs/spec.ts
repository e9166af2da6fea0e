import { command, type OptionSpec } from '../../cli/spec.ts';
import { context, envName } from '../shared.ts';

export const logsOptions = [
  { name: 'follow', short: 'f', type: 'bool', default: 'false', description: 'Keep following: new lines, and the pods that come later' },
  { name: 'since', type: 'duration', defaultText: 'every line', description: 'Only lines newer than this, like 10m or 1h30m' },
  { name: 'tail', type: 'string', defaultText: 'every line', description: 'Only the last N lines of each container' },
  { name: 'timestamps', type: 'bool', default: 'false', description: 'Start each line with its time (RFC 3339)' },
  { name: 'all', type: 'bool', default: 'false', description: 'Every pod of the namespace, not only those of the environment' },
  envName(),
  { name: 'namespace', short: 'n', type: 'string', defaultText: 'current context namespace', description: 'Namespace of the environment' },
  context,
] as const satisfies readonly OptionSpec[];

export const logsCommand = command({
  name: 'logs',
  summary: 'Print the logs of the development environment',
  description:
    'Prints the logs of every container of the pods of the environment (those `deploy` made, found by its labels), or of the services named, ' +
    'their lines interleaved as they come, each starting with [service/pod] ([service/pod/container] in a pod of several containers). ' +
    '--follow keeps printing, and follows the pods that start later (a restarted or replaced pod, a new replica) from their first line, ' +
    'until Ctrl-C. --tail and --since apply to each container.',
  args: [
    { name: 'service', variadic: true, description: 'Services whose logs to print: a Compose service, or a workload of the manifest (default: every one)' },
  ],
  options: logsOptions,
  load: async () => (await import('./run.ts')).runLogs,
});
