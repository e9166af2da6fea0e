/**
 * `pipeline deploy` and `pipeline destroy`: the service runs `devtool deploy` or `devtool destroy` in
 * a Job of the namespace on a clone of the repository (server/pipelines/). With --wait the runner's
 * output is shown as it comes, then the status; without, the command returns once the run is
 * accepted and says how to follow it.
 */
import { basename } from 'node:path';
import { DevtoolError, UsageError } from '../../base/errors.ts';
import { assignmentWords } from '../../cli/assignments.ts';
import type { CommandHandler } from '../../cli/spec.ts';
import type { Factory } from '../../factory.ts';
import { originUrl, sanitizeName } from '../../app/name.ts';
import type { ServiceClient } from '../../service/client.ts';
import type { PipelineRunBody } from '../../../api/routes.ts';
import { serviceTarget } from '../require-service.ts';
import type { pipelineDeployOptions, pipelineDestroyOptions } from './spec.ts';

const FEATURE = 'pipelines';
/** How many lines of a failed run's output the error shows. */
const LAST_LINES = 15;

export const runPipelineDeploy: CommandHandler<typeof pipelineDeployOptions> = async (f, inv) => {
  const { ctx, client } = await serviceTarget(f, inv.commandName, FEATURE, inv.opts.context);
  // --reuse-params: the service takes what is not given from the last deploy.
  const repository = inv.opts.repository ?? (inv.opts.reuseParams ? undefined : checkoutRepository(f.cwd));
  if (repository !== undefined) checkRepository(repository, inv.opts.repository === undefined);
  const name = pipelineName(inv.opts.name, inv.opts.repository, f.cwd);
  const namespace = inv.opts.namespace ?? ctx.namespace;
  const run = await client.call('deployPipeline', {
    body: {
      namespace,
      name,
      ...(repository ? { repository } : {}),
      ...(inv.opts.branch ? { branch: inv.opts.branch } : {}),
      ...(inv.opts.file ? { file: inv.opts.file } : {}),
      variables: assignmentWords(inv.opts.var),
      timeoutSeconds: Math.max(1, Math.ceil(inv.opts.timeout / 1000)),
      skipIfExists: inv.opts.skipIfExists,
      ...(inv.opts.reuseParams ? { reuseParams: true } : {}),
    },
  });
  if (run.skipped) {
    f.io.stdout.write(`Pipeline "${name}" is already deployed in namespace ${namespace}${run.commit ? ` (commit ${run.commit.slice(0, 12)})` : ''}: skipped\n`);
    return;
  }
  await follow(f, client, run, inv.opts.wait, inv.opts.timeout);
};

export const runPipelineDestroy: CommandHandler<typeof pipelineDestroyOptions> = async (f, inv) => {
  const { ctx, client } = await serviceTarget(f, inv.commandName, FEATURE, inv.opts.context);
  const name = pipelineName(inv.opts.name, undefined, f.cwd);
  const namespace = inv.opts.namespace ?? ctx.namespace;
  const run = await client.call('destroyPipeline', {
    params: { namespace, name },
    body: { volumes: inv.opts.volumes, timeoutSeconds: Math.max(1, Math.ceil(inv.opts.timeout / 1000)) },
  });
  await follow(f, client, run, inv.opts.wait, inv.opts.timeout);
};

/** --name, else the repository's name when --repository was given, else the folder's. */
export function pipelineName(explicit: string | undefined, repository: string | undefined, cwd: string): string {
  if (explicit !== undefined) {
    const name = sanitizeName(explicit);
    if (!name || name.length > 40) throw new UsageError(`invalid value "${explicit}" for flag --name: letters, digits and '-', at most 40 characters`);
    return name;
  }
  const fromRepository = repository
    ?.replace(/\/+$/, '')
    .split('/')
    .pop()
    ?.replace(/\.git$/, '');
  return (
    sanitizeName(fromRepository || basename(cwd))
      .slice(0, 40)
      .replace(/-+$/, '') || 'app'
  );
}

export function checkoutRepository(cwd: string): string {
  const url = originUrl(cwd);
  if (!url) throw new UsageError(`no --repository, and ${cwd} is not a git checkout with an origin remote: pass --repository https://...`);
  return url;
}

/** HTTPS only, never SSH, and no credentials in the URL (a token belongs in the stored secrets). */
export function checkRepository(url: string, fromCheckout: boolean): void {
  const where = fromCheckout ? `the checkout's origin remote (${url})` : `invalid value "${url}" for flag --repository`;
  const ssh = /^(?:ssh:\/\/)?(?:[^@/]+@)?([^:/]+)[:/](.+?)(?:\.git)?\/?$/.exec(url);
  if (!/^https:\/\//.test(url)) {
    const hint = !/^\w+:\/\//.test(url) || url.startsWith('ssh://') ? ssh && `; e.g. --repository https://${ssh[1]}/${ssh[2]}.git` : '';
    throw new UsageError(`${where}: pipelines clone over HTTPS only (never SSH)${hint ?? ''}`);
  }
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new UsageError(`${where}: not a URL`);
  }
  if (parsed.username || parsed.password) {
    throw new UsageError(`${where}: credentials do not belong in the URL; store the token on the service as the secret GIT_TOKEN_<HOST> instead`);
  }
}

/**
 * The HTTP status of a service refusal (ServiceError's; read, not matched with instanceof: the
 * client lives in its own bundle), undefined when the service was not reached.
 */
export const statusOf = (err: unknown) => {
  const status = (err as { status?: unknown }).status;
  return typeof status === 'number' ? status : undefined;
};

/**
 * Without --wait: how to follow. With --wait: the output as it comes, then the status. `label`
 * names the run in what is printed (a preview's run is its pipeline's).
 */
export async function follow(
  f: Factory,
  client: ServiceClient,
  run: PipelineRunBody,
  wait: boolean,
  timeoutMs: number,
  label = `pipeline "${run.name}"`,
  /** The run is one step of the caller's (a preview's destroy): its success is a step line, the caller says ✓. */
  oneStep = false,
): Promise<void> {
  const what = run.action === 'deploy' ? 'deploy' : 'destroy';
  if (!wait) {
    f.io.stdout.write(
      `Pipeline "${run.name}" ${what} started in namespace ${run.namespace} (Job ${run.job}).\n` +
        `Follow it with: kubectl logs -f job/${run.job} -n ${run.namespace}, or run it with --wait\n`,
    );
    return;
  }
  f.io.stderr.write(`• ${label}: ${what} running in namespace ${run.namespace} (Job ${run.job})\n`);
  // The stream may be cut (a service pod stopping); the next one starts from the beginning of the
  // output, so what was shown already is skipped.
  const deadline = Date.now() + timeoutMs + 120_000;
  let shown = 0;
  let last: PipelineRunBody = run;
  let unreachable = 0;
  while (Date.now() < deadline) {
    try {
      let seen = 0;
      // Bounded by the run's own deadline: a service that stops sending never holds the command.
      const signal = AbortSignal.timeout(Math.max(1000, deadline - Date.now()));
      await client.call('pipelineLog', {
        params: { namespace: run.namespace, name: run.name },
        onText: (text) => {
          const fresh = text.slice(Math.max(0, shown - seen));
          seen += text.length;
          if (fresh) {
            f.io.stdout.write(fresh);
            shown += fresh.length;
          }
        },
        signal,
      });
      last = await client.call('getPipeline', { params: { namespace: run.namespace, name: run.name } });
      unreachable = 0;
    } catch (err) {
      // A destroy that succeeded removes its record (and a preview's namespace goes after it): gone is done.
      if (statusOf(err) === 404 && run.action === 'destroy') {
        last = { ...last, status: 'destroyed' };
        break;
      }
      // The run goes on in the cluster when the service cannot be reached for a moment (a replica
      // or the ingress restarting): ask again, for a minute at most.
      if ((statusOf(err) ?? 500) < 500) throw err;
      if (++unreachable > 30) throw err;
    }
    if (last.status !== 'progressing' && last.status !== 'destroying') break;
    // The Job's result follows the end of its output by a moment.
    await new Promise((r) => setTimeout(r, unreachable ? 2000 : 1000));
  }
  if (last.status === 'deployed' || last.status === 'destroyed') {
    const commit = last.commit ? ` (commit ${last.commit.slice(0, 12)})` : '';
    f.io.stderr.write(oneStep ? `• ${label}: its ${what} run ended${commit}\n` : `✓ ${label} ${last.status} in namespace ${run.namespace}${commit}\n`);
    return;
  }
  if (last.status === 'error') {
    const lines = (last.log ?? '').replace(/\n$/, '').split('\n').slice(-LAST_LINES);
    if (lines.join('')) f.io.stderr.write(`last lines of the run:\n${lines.map((l) => `  ${l}`).join('\n')}\n`);
    throw new DevtoolError(`${label} failed in namespace ${run.namespace}: ${last.message ?? 'see the lines above'}`);
  }
  throw new DevtoolError(`${label} still ${last.status} after --timeout ${Math.round(timeoutMs / 1000)}s`);
}
