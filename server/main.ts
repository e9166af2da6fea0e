/**
 * The devtool service program (dist/devtool-service.cjs):
 *   serve                      the HTTP service (settings from the environment: config.ts)
 *   create-user NAME [--admin] an account, its namespace and an API token, printed as the last line
 *   disable-user NAME          its tokens deleted, its sessions, sign-ins and tokens refused from then on
 *   enable-user NAME           enabled again, with a new API token printed as the last line
 *   delete-user NAME           the account and every namespace it owns (accounts.ts)
 * The operator runs them with `kubectl exec` into a service pod (`npm run service:user`).
 */
import { parseArgs } from 'node:util';
import { createAccount, deleteAccount, disableAccount, enableAccount } from './accounts.ts';
import { buildApp } from './app.ts';
import { readSettings } from './config.ts';
import { tokenRequestIssuer } from './kube-credentials.ts';
import { settleWakingNamespaces, sweepIdleNamespaces } from './namespaces/sweeper.ts';
import { humanDuration, sweepPreviews } from './previews/sweeper.ts';
import { namespaceDeps } from './routes/namespaces.ts';
import { previewDeps } from './routes/previews.ts';
import { KubeStore, kubeErrorLine } from './store/kubernetes.ts';

const USAGE = 'usage: devtool-service serve | create-user NAME [--admin] | disable-user NAME | enable-user NAME | delete-user NAME';

class UsageFailure extends Error {}

async function serve(): Promise<void> {
  const s = readSettings(process.env);
  const store = await KubeStore.create({ namespace: s.namespace, extraLabels: s.objectLabels, namespacePolicy: s.namespacePolicy });
  const kubeCredentials = s.kube && { ...s.kube, issuer: await tokenRequestIssuer(s.namespace) };
  const app = await buildApp({ store, config: s.config, logLevel: s.logLevel, ...(kubeCredentials ? { kubeCredentials } : {}) });
  // Abandoned sessions and codes, and expired API tokens (a pipeline run's whose end nobody
  // recorded), are removed every 10 minutes (each replica; deleting twice is harmless).
  const sweep = setInterval(() => {
    store.sweepExpiredGrants(new Date()).then(
      (n) => n > 0 && app.log.info({ swept: n }, 'expired login grants removed'),
      (err: unknown) => app.log.warn({ err }, 'sweeping expired login grants failed'),
    );
    store.sweepExpiredTokens(new Date()).then(
      (n) => n > 0 && app.log.info({ swept: n }, 'expired API tokens removed'),
      (err: unknown) => app.log.warn({ err }, 'sweeping expired API tokens failed'),
    );
  }, 600_000);
  sweep.unref();
  // Namespaces made before this policy (an older install, a tighter upgrade) get it now.
  store.enforceNamespacePolicy().then(
    (r) => {
      if (Object.keys(r.changed).length) app.log.info({ changed: r.changed }, 'namespace policy enforced');
      for (const [namespace, error] of Object.entries(r.failed)) app.log.warn({ namespace, error }, 'enforcing the namespace policy failed');
    },
    (err: unknown) => app.log.warn({ err }, 'enforcing the namespace policy failed'),
  );
  // preview environments: destroys asked for without --wait, and stale previews (previews/sweeper.ts).
  const previews = previewDeps({ store, config: s.config, now: () => new Date() }, kubeCredentials);
  const sweepSettings = { ...(s.previews.staleAfterMs ? { staleAfterMs: s.previews.staleAfterMs } : {}), timeoutSeconds: 600 };
  let sweeping = false;
  const sweepPreviewsNow = () => {
    if (sweeping || !kubeCredentials || !s.config.runnerImage) return;
    sweeping = true;
    sweepPreviews(previews, sweepSettings)
      .then(
        (r) => {
          if (r.advanced.length || r.stale.length) app.log.info({ advanced: r.advanced, stale: r.stale }, 'preview environments swept');
          for (const f of r.failed) app.log.warn({ preview: f.name, error: f.error }, 'sweeping a preview environment failed');
        },
        (err: unknown) => app.log.warn({ err }, 'sweeping preview environments failed'),
      )
      .finally(() => {
        sweeping = false;
      });
  };
  // Replicas started together would sweep in step: each starts at a random point of the interval.
  const firstSweep = setTimeout(
    () => {
      setInterval(sweepPreviewsNow, s.previews.sweepIntervalMs).unref();
      sweepPreviewsNow();
    },
    Math.floor(Math.random() * s.previews.sweepIntervalMs),
  );
  firstSweep.unref();
  sweepNamespacesFrom(app, namespaceDeps({ store, config: s.config, now: () => new Date() }, kubeCredentials), s);
  const stop = async () => {
    await app.close();
    process.exit(0);
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  await app.listen({ port: s.port, host: s.host });
}

/** How often waking namespaces are looked at: the front door's waking page waits on their mark. */
const WAKING_CHECK_MS = 5_000;

/**
 * Namespace sleep (namespaces/sweeper.ts): waking namespaces every WAKING_CHECK_MS; idle ones every
 * sleep sweep interval, when the chart set `sleep.afterIdle` or `sleep.deleteAfterIdle`. Each
 * automatic sleep and deletion is logged with how long the namespace was idle.
 */
function sweepNamespacesFrom(app: Awaited<ReturnType<typeof buildApp>>, deps: ReturnType<typeof namespaceDeps>, s: ReturnType<typeof readSettings>): void {
  const idle = s.config.namespaceIdle;
  const busy = { waking: false, idle: false };
  const every = (kind: keyof typeof busy, ms: number, sweep: () => Promise<void>) => {
    const run = () => {
      if (busy[kind] || !s.kube) return;
      busy[kind] = true;
      sweep()
        .catch((err: unknown) => app.log.warn({ err }, `sweeping ${kind} namespaces failed`))
        .finally(() => {
          busy[kind] = false;
        });
    };
    // Replicas started together would sweep in step: each starts at a random point of the interval.
    setTimeout(
      () => {
        setInterval(run, ms).unref();
        run();
      },
      Math.floor(Math.random() * ms),
    ).unref();
  };
  every('waking', WAKING_CHECK_MS, async () => {
    const r = await settleWakingNamespaces(deps);
    for (const name of r.awake) app.log.info({ namespace: name }, 'namespace awake: its workloads are available');
    for (const name of r.gaveUp) app.log.warn({ namespace: name }, 'namespace woken: its workloads were not all available after 5 minutes');
    for (const f of r.failed) app.log.warn({ namespace: f.name, error: f.error }, 'settling a waking namespace failed');
  });
  if (!idle) return;
  every('idle', s.sleep.sweepIntervalMs, async () => {
    const r = await sweepIdleNamespaces(deps, idle);
    for (const x of r.slept) app.log.info({ namespace: x.name, idleFor: humanDuration(x.idleMs) }, 'idle namespace put to sleep');
    for (const x of r.deleted) app.log.info({ namespace: x.name, idleFor: humanDuration(x.idleMs) }, 'idle namespace deleted');
    for (const f of r.failed) app.log.warn({ namespace: f.name, error: f.error }, 'sweeping an idle namespace failed');
  });
}

async function createUser(args: string[]): Promise<void> {
  const { values, positionals } = parseArgs({ args, options: { admin: { type: 'boolean', default: false } }, allowPositionals: true });
  if (positionals.length !== 1) throw new UsageFailure(`create-user takes one NAME (${positionals.length} given); ${USAGE}`);
  const s = readSettings(process.env);
  const store = await KubeStore.create({ namespace: s.namespace, extraLabels: s.objectLabels, namespacePolicy: s.namespacePolicy });
  const account = await createAccount(store, positionals[0]!, values.admin, new Date());
  process.stdout.write(
    `created user ${account.name}${account.admin ? ' (admin)' : ''} with namespace ${account.namespace}; its API token:\n${account.token}\n`,
  );
}

/** disable-user, enable-user, delete-user: one NAME each. */
async function changeUser(command: 'disable-user' | 'enable-user' | 'delete-user', args: string[]): Promise<void> {
  const { positionals } = parseArgs({ args, options: {}, allowPositionals: true });
  if (positionals.length !== 1) throw new UsageFailure(`${command} takes one NAME (${positionals.length} given); ${USAGE}`);
  const name = positionals[0]!;
  const s = readSettings(process.env);
  const store = await KubeStore.create({ namespace: s.namespace, extraLabels: s.objectLabels, namespacePolicy: s.namespacePolicy });
  if (command === 'disable-user') {
    await disableAccount(store, name);
    process.stdout.write(`disabled user ${name}: its tokens are deleted, its sessions and sign-ins refused; its namespaces stay\n`);
  } else if (command === 'enable-user') {
    const token = await enableAccount(store, name, new Date(), true);
    process.stdout.write(`enabled user ${name}; a new API token:\n${token}\n`);
  } else {
    if (!(await store.getUser(name))) throw new Error(`no user ${name}`);
    const namespaces = await deleteAccount(store, name);
    process.stdout.write(`deleted user ${name} and its namespaces: ${namespaces.join(', ') || 'none'}\n`);
  }
}

async function main(argv: string[]): Promise<void> {
  const [command, ...rest] = argv;
  if (command === 'serve' && rest.length === 0) return serve();
  if (command === 'create-user') return createUser(rest);
  if (command === 'disable-user' || command === 'enable-user' || command === 'delete-user') return changeUser(command, rest);
  throw new UsageFailure(command ? `unknown command "${argv.join(' ')}"; ${USAGE}` : USAGE);
}

main(process.argv.slice(2)).catch((err: unknown) => {
  const message = kubeErrorLine(err) ?? (err instanceof Error ? err.message : String(err));
  process.stderr.write(`devtool-service: ${message.replace(/\s*\n\s*/g, ' ')}\n`);
  process.exit(err instanceof UsageFailure || (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS') ? 2 : 1);
});
