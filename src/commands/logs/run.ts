import type { V1Pod } from '@kubernetes/client-node';
import { DevtoolError, UsageError } from '../../base/errors.ts';
import type { CommandHandler } from '../../cli/spec.ts';
import { environmentName } from '../../app/name.ts';
import { loadDestroySource } from '../../deploy/environment-deploy.ts';
import { podLogApi } from '../../deploy/logs/api.ts';
import { linePrefix, parseTail, ServiceColours, sinceSeconds } from '../../deploy/logs/lines.ts';
import { chosenServices, podService, workloadService, type Workload } from '../../deploy/logs/pods.ts';
import { PodLogs, type PodLogApi } from '../../deploy/logs/stream.ts';
import type { Factory } from '../../factory.ts';
import { seriesFor } from '../../io/style.ts';
import { ENVIRONMENT_LABEL, environmentSelector } from '../../kube/labels.ts';
import { clusterTarget, type KubeTarget } from '../../kube/target.ts';
import { workloadsByLabel } from '../../kube/workloads.ts';
import type { logsOptions } from './spec.ts';

/** What `logs` reads in the namespace: the pods and their logs, and the workloads (which services exist). */
export interface LogsCluster {
  logs: PodLogApi;
  workloads(labelSelector: string): Promise<Workload[]>;
}

export const runLogs = logsHandler(async (f, target) => {
  const client = await f.kube(target);
  return { logs: podLogApi(client), workloads: (labelSelector) => workloadsByLabel(client, labelSelector) };
});

/** The handler, reading the namespace `clusterOf` gives (the real one above; an in-memory one in its test). */
export function logsHandler(clusterOf: (f: Factory, target: KubeTarget) => Promise<LogsCluster>): CommandHandler<typeof logsOptions> {
  return async (f, inv) => {
    const tailLines = parseTail(inv.opts.tail);
    const asked = inv.args;
    if (inv.opts.all && asked.length > 0) throw new UsageError(`--all prints every pod of the namespace: name no service with it (${asked.join(', ')})`);
    const { context, namespace } = await clusterTarget(f, { context: inv.opts.context, namespace: inv.opts.namespace });
    // The environment as `deploy` names it: --name, else the manifest's name, else the folder's.
    const environment = inv.opts.all ? undefined : environmentOf(f, inv.opts.name);
    const cluster = await clusterOf(f, { context, namespace });
    const labelSelector = environment ? environmentSelector(environment) : undefined;
    const what = environment
      ? `environment ${environment} in namespace ${namespace}${await otherEnvironments(cluster, environment)}`
      : `namespace ${namespace}`;
    let accept = (_pod: V1Pod) => true;
    if (asked.length > 0 && labelSelector) {
      const [workloads, pods] = await Promise.all([cluster.workloads(labelSelector), cluster.logs.pods(labelSelector)]);
      const services = chosenServices(asked, [...workloads.map(workloadService), ...pods.items.map(podService)], what);
      accept = (pod) => services.has(podService(pod));
    }
    const colours = new ServiceColours(seriesFor(f.io.stdout, f.env));
    const logs = new PodLogs(
      cluster.logs,
      {
        labelSelector,
        accept,
        what,
        follow: inv.opts.follow,
        timestamps: inv.opts.timestamps,
        ...(tailLines !== undefined ? { tailLines } : {}),
        ...(inv.opts.since ? { sinceSeconds: sinceSeconds(inv.opts.since) } : {}),
      },
      {
        line: (run, text) => f.io.stdout.write(`${colours.of(run.service)(linePrefix(run))} ${text}\n`),
        notice: (text) => f.io.stderr.write(`${text}\n`),
      },
    );
    const result = await untilStopped((signal) => logs.run(signal), f.io.stdout);
    if (result.failed > 0) throw new DevtoolError(`the logs of ${result.failed} container(s) could not be read (each said above)`);
  };
}

/**
 * When the folder's environment has no pods but others in the namespace do (deployed with
 * `--name`), the words that name them: a newcomer in the folder learns which `--name` to give.
 */
async function otherEnvironments(cluster: LogsCluster, environment: string): Promise<string> {
  const pods = (await cluster.logs.pods(ENVIRONMENT_LABEL)).items;
  const names = [...new Set(pods.map((p) => p.metadata?.labels?.[ENVIRONMENT_LABEL] ?? ''))].filter(Boolean).sort();
  if (names.length === 0 || names.includes(environment)) return '';
  return ` (deployed there: ${names.join(', ')}; name one with --name)`;
}

function environmentOf(f: Factory, name: string | undefined): string {
  const { manifest, folder } = loadDestroySource(f.cwd, undefined, f.env);
  return environmentName(name ?? manifest?.name, folder);
}

/**
 * Runs `work` until it ends, or until Ctrl-C, SIGTERM or a reader gone from stdout (`logs -f |
 * head`): then its signal is aborted, and it ends as a finished run does. Nothing is changed, so
 * nothing is left to say: the command ends quietly, exit code 0.
 */
async function untilStopped<T>(work: (signal: AbortSignal) => Promise<T>, stdout: NodeJS.WritableStream): Promise<T> {
  const controller = new AbortController();
  const stop = () => controller.abort();
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  stdout.once('error', stop);
  stdout.once('close', stop);
  try {
    return await work(controller.signal);
  } finally {
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
    stdout.off('error', stop);
    stdout.off('close', stop);
  }
}
