/**
 * `preview deploy|destroy|list|endpoints|sleep|wake`: preview environments on the devtool service
 * (server/previews/). A preview's runs are its pipeline's, in the preview's namespace, so --wait
 * follows them as `pipeline deploy --wait` does.
 */
import { DevtoolError, UsageError } from '../../base/errors.ts';
import { assignmentWords } from '../../cli/assignments.ts';
import type { CommandHandler } from '../../cli/spec.ts';
import { currentBranch, originUrl, repositoryNameOf, sanitizeName } from '../../app/name.ts';
import { formatTable } from '../../io/table.ts';
import { DNS_LABEL_MAX, DNS_LABEL_RULE, isDnsLabel } from '../../kube/naming.ts';
import type { ServiceClient } from '../../service/client.ts';
import type { PreviewBody } from '../../../api/routes.ts';
import { checkoutRepository, checkRepository, follow, statusOf } from '../pipeline/run.ts';
import { serviceTarget } from '../require-service.ts';
import type { serviceOptions } from '../shared.ts';
import type { previewDeployOptions, previewDestroyOptions, previewEndpointsOptions } from './spec.ts';

const FEATURE = 'preview environments';

export const runPreviewDeploy: CommandHandler<typeof previewDeployOptions> = async (f, inv) => {
  const { client } = await serviceTarget(f, inv.commandName, FEATURE, inv.opts.context);
  const fromCheckout = inv.opts.repository === undefined;
  const repository = inv.opts.repository ?? checkoutRepository(f.cwd);
  checkRepository(repository, fromCheckout);
  // The current branch only when the repository is the checkout's: another repository's default branch otherwise.
  const branch = inv.opts.branch ?? (fromCheckout || sameRepository(originUrl(f.cwd), repository) ? currentBranch(f.cwd) : undefined);
  const name = previewName(inv.args[0], repository, branch);
  const sourceUrl = inv.opts.sourceUrl;
  if (sourceUrl !== undefined && !/^https:\/\/\S+$/.test(sourceUrl)) {
    throw new UsageError(`invalid value "${sourceUrl}" for flag --sourceUrl: the HTTPS URL of the pull or merge request`);
  }
  const preview = await client.call('deployPreview', {
    body: {
      name,
      scope: inv.opts.scope as 'personal' | 'global',
      repository,
      ...(branch ? { branch } : {}),
      ...(inv.opts.file ? { file: inv.opts.file } : {}),
      ...(sourceUrl ? { sourceUrl } : {}),
      variables: assignmentWords(inv.opts.var),
      timeoutSeconds: seconds(inv.opts.timeout),
    },
  });
  const label = `preview "${name}"`;
  if (!inv.opts.wait) {
    f.io.stdout.write(
      `Preview environment "${name}" (${preview.scope}) is being deployed in namespace ${name}${preview.branch ? ` from branch ${preview.branch}` : ''}.\n` +
        `Follow it with: devtool preview list, or run it with --wait\n`,
    );
    return;
  }
  await follow(f, client, await client.call('getPipeline', { params: { namespace: name, name: preview.pipeline } }), true, inv.opts.timeout, label);
  const { endpoints } = await client.call('previewEndpoints', { params: { name } });
  if (endpoints.length) f.io.stdout.write(`Endpoints of preview "${name}":\n${endpoints.map((u) => `  ${u}\n`).join('')}`);
};

export const runPreviewDestroy: CommandHandler<typeof previewDestroyOptions> = async (f, inv) => {
  const { client } = await serviceTarget(f, inv.commandName, FEATURE, inv.opts.context);
  const name = previewName(inv.args[0], undefined, undefined, f.cwd, inv.commandName);
  const preview = await client.call('destroyPreview', { params: { name }, body: { timeoutSeconds: seconds(inv.opts.timeout) } });
  if (!inv.opts.wait) {
    f.io.stdout.write(`Preview environment "${name}" is being destroyed: its destroy runs, then its namespace is deleted\n`);
    return;
  }
  const deadline = Date.now() + inv.opts.timeout + 60_000;
  if (preview.job) {
    const run = await client.call('getPipeline', { params: { namespace: name, name: preview.pipeline } }).catch((err: unknown) => {
      if (statusOf(err) === 404) return undefined; // ended and recorded already
      throw err;
    });
    if (run) await follow(f, client, run, true, inv.opts.timeout, `preview "${name}"`, true);
  }
  // The namespace goes once the run has ended: the service deletes it, Kubernetes empties it.
  f.io.stderr.write(`• preview "${name}": deleting its namespace\n`);
  for (;;) {
    const left = await client.call('getPreview', { params: { name } }).catch((err: unknown) => {
      if (statusOf(err) === 404) return undefined;
      throw err;
    });
    if (!left) break;
    if (left.status === 'error') throw new DevtoolError(`preview "${name}": ${left.message ?? 'destroy failed'}`);
    if (Date.now() > deadline) throw new DevtoolError(`preview "${name}" still ${left.status} after --timeout ${Math.round(inv.opts.timeout / 1000)}s`);
    await new Promise((r) => setTimeout(r, 1000));
  }
  f.io.stderr.write(`✓ preview "${name}" destroyed\n`);
};

export const runPreviewList: CommandHandler<typeof serviceOptions> = async (f, inv) => {
  const { client } = await serviceTarget(f, inv.commandName, FEATURE, inv.opts.context);
  const { previews } = await client.call('listPreviews');
  if (previews.length === 0) {
    f.io.stderr.write('No preview environments: deploy one with devtool preview deploy\n');
    return;
  }
  const now = f.now().getTime();
  const rows = previews.map((p) => [p.name, p.scope, p.status, p.branch ?? '-', age(now - Date.parse(p.createdAt ?? p.deployedAt)), p.owner]);
  f.io.stdout.write(formatTable(['Name', 'Scope', 'Status', 'Branch', 'Age', 'Owner'], rows));
  const failed = previews.filter((p) => p.status === 'error' && p.message);
  for (const p of failed) f.io.stderr.write(`${p.name}: ${p.message}\n`);
};

export const runPreviewEndpoints: CommandHandler<typeof previewEndpointsOptions> = async (f, inv) => {
  const { client } = await serviceTarget(f, inv.commandName, FEATURE, inv.opts.context);
  const name = previewName(inv.args[0], undefined, undefined, f.cwd, inv.commandName);
  const { endpoints } = await client.call('previewEndpoints', { params: { name } });
  if (inv.opts.output === 'json') {
    f.io.stdout.write(`${JSON.stringify(endpoints, null, 2)}\n`);
    return;
  }
  if (endpoints.length === 0) await sayWhyNone(f.io.stderr, client, name);
  f.io.stdout.write(endpoints.map((u) => `${u}\n`).join(''));
};

/** sleep: its workloads scaled to zero; wake: back as they were. */
export const runPreviewSleep: CommandHandler<typeof serviceOptions> = async (f, inv) => {
  const { client } = await serviceTarget(f, inv.commandName, FEATURE, inv.opts.context);
  const name = previewName(inv.args[0], undefined, undefined, f.cwd, inv.commandName);
  await client.call('sleepPreview', { params: { name } });
  f.io.stdout.write(`Preview environment "${name}" is asleep: its pods are stopped, its volumes and endpoints kept; devtool preview wake ${name} wakes it\n`);
};

export const runPreviewWake: CommandHandler<typeof serviceOptions> = async (f, inv) => {
  const { client } = await serviceTarget(f, inv.commandName, FEATURE, inv.opts.context);
  const name = previewName(inv.args[0], undefined, undefined, f.cwd, inv.commandName);
  const woken = await client.call('wakePreview', { params: { name } });
  f.io.stdout.write(`Preview environment "${name}" is waking up (${woken.status}): its workloads have their replicas back\n`);
};

async function sayWhyNone(stderr: NodeJS.WritableStream, client: ServiceClient, name: string): Promise<void> {
  const p: PreviewBody = await client.call('getPreview', { params: { name } });
  stderr.write(`No public endpoints in preview "${name}" (${p.status}${p.status === 'error' && p.message ? `: ${p.message}` : ''})\n`);
}

/**
 * The given name (checked), else `<repository>-<branch>` of the checkout (or of --repository and
 * --branch): one preview per branch, as its pull request has.
 */
export function previewName(
  given: string | undefined,
  repository: string | undefined,
  branch: string | undefined,
  cwd?: string,
  commandName = 'preview deploy',
): string {
  if (given !== undefined) {
    if (!isDnsLabel(given)) throw new UsageError(`invalid preview name "${given}": ${DNS_LABEL_RULE}, at most ${DNS_LABEL_MAX}`);
    return given;
  }
  const repo = repository ?? (cwd ? originUrl(cwd) : undefined);
  const repoName = repo && repositoryNameOf(repo);
  if (!repoName)
    throw new UsageError(`no preview name, and this folder is not a git checkout with an origin remote: pass the name, e.g. devtool ${commandName} my-preview`);
  const b = branch ?? (repository === undefined && cwd ? currentBranch(cwd) : undefined);
  return sanitizeName(b ? `${repoName}-${b}` : repoName)
    .slice(0, DNS_LABEL_MAX)
    .replace(/-+$/, '');
}

const normalized = (url: string) =>
  url
    .replace(/\.git$/, '')
    .replace(/\/+$/, '')
    .toLowerCase();
const sameRepository = (a: string | undefined, b: string) => a !== undefined && normalized(a) === normalized(b);
const seconds = (ms: number) => Math.max(1, Math.ceil(ms / 1000));

/** 45s, 12m, 3h, 2d: kubectl's way of saying an age. */
export function age(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 120) return `${s}s`;
  if (s < 7200) return `${Math.floor(s / 60)}m`;
  if (s < 172_800) return `${Math.floor(s / 3600)}h`;
  return `${Math.floor(s / 86_400)}d`;
}
