import type { CommandHandler } from '../../cli/spec.ts';
import { Progress } from '../../deploy/progress.ts';
import { activate } from '../../dev/activate.ts';
import { checkDeployFlag, deployIfNeeded } from '../../dev/deploy-first.ts';
import { captureOutput, runSession, shellJoin } from '../../dev/session.ts';
import { parseEnvList } from '../../dev/spec.ts';
import { standaloneImage } from '../../dev/standalone.ts';
import { agentImage, devTarget } from '../../dev/target.ts';
import { DevTunnel } from '../../dev/tunnel.ts';
import { watchOriginal, type OriginalWatch } from '../../dev/original-watch.ts';
import { checkWatchLimits, describeFolder, firstSyncSummary, prepareSync, startSync, syncingHow, syncSession } from '../../dev/up-sync.ts';
import type { SyncSession } from '../../sync/session.ts';
import { devTargetQuery } from '../shared.ts';
import type { upOptions } from './spec.ts';

/** How long `up` waits for the dev pod (image pulls included). */
const READY_TIMEOUT_MS = 5 * 60_000;

export const runUp: CommandHandler<typeof upOptions> = async (f, inv) => {
  // The command line first: a bad --env is a usage error before any file or cluster is read.
  const extraEnv = parseEnvList(inv.opts.env);
  const t = await devTarget(f, devTargetQuery(inv));
  f.log.debug(`dev container ${t.devName} of ${t.manifest.file}, namespace ${t.namespace}`);
  checkDeployFlag(f, t, inv.opts.deploy);
  const release = t.state.lock(t.devName);
  let tunnel: DevTunnel | undefined;
  let sync: SyncSession | undefined;
  let originalWatch: OriginalWatch | undefined;
  try {
    const image = agentImage(f, t.context);
    const keys = t.state.keys();
    const client = await f.kube(t);
    f.log.debug('cluster client ready');
    const progress = new Progress(f.io.stderr, f.now, f.log);
    const syncPlan = await prepareSync(f, t);
    f.log.debug('sync keys and binaries ready');
    // What is synchronized, and what is not, is said before anything happens.
    for (const x of syncPlan?.folders ?? []) progress.step(`sync ${describeFolder(x, t.manifest.folder)}`);
    for (const note of t.skipped) progress.warn(note);
    await deployIfNeeded(f, t, client, inv.opts.deploy, progress);
    tunnel = new DevTunnel({
      client,
      devName: t.devName,
      hostPublicKey: keys.host.publicKey,
      clientPrivateKey: keys.client.privateKey,
      log: f.log,
      forwards: t.dev.forward,
      reverses: t.dev.reverse,
      notice: (m) => progress.warn(m),
    });
    // This machine's sync end starts now, while the dev pod does.
    if (syncPlan) sync = syncSession(f, t, syncPlan, tunnel, { reset: inv.opts.reset, notice: (m) => progress.warn(m) });
    const { objects, pod, rebuild, standalone, kind } = await activate(client, t, {
      syncthing: syncPlan?.remoteSection,
      extraEnv,
      agentImage: image,
      hostPrivateKey: keys.host.privateKey,
      clientPublicKey: keys.client.publicKey,
      timeoutMs: READY_TIMEOUT_MS,
      step: (m) => progress.step(m),
      log: (line) => f.log.debug(line),
      standaloneImage: () => standaloneImage(f, t, progress),
    });
    // Keeps the mirror in step with the original while `up` runs (src/dev/original-watch.ts); a standalone one has none.
    if (!standalone)
      originalWatch = watchOriginal({ client, kind, folder: t.folder, origin: t.origin, objects, rebuild, notice: (m) => progress.warn(m), log: f.log });
    await tunnel.start();
    f.log.debug('connected to the dev container');
    if (syncPlan && sync) {
      progress.step('starting the sync (first pass: no local file is overwritten or deleted)');
      const started = Date.now();
      const session = sync;
      const firstSync = await startSync(t, session);
      progress.step(firstSyncSummary(firstSync, ((Date.now() - started) / 1000).toFixed(1)));
      if (firstSync.some((r) => r.copied)) {
        // Said on stderr only without a shell, where it would land in the middle of the prompt.
        void session.settled.then(
          () => {
            const line = `first sync settled in ${((Date.now() - started) / 1000).toFixed(1)}s; ${syncingHow(syncPlan.folders)}`;
            if (f.interactive) f.log.info(line);
            else progress.step(line);
          },
          () => undefined,
        );
      }
      const ssh = await tunnel.connection();
      await checkWatchLimits(
        syncPlan,
        (command) => captureOutput(ssh, command),
        (m) => progress.warn(m),
      );
    }
    // The state, on stdout: what a script (or a test) waits for.
    const lines = [`dev container ${objects.deployment.metadata.name} is ready (pod ${pod}, namespace ${t.namespace})`];
    for (const fw of t.dev.forward) lines.push(`  forward  localhost:${fw.local} -> ${fw.service ?? t.devName}:${fw.remote}`);
    for (const r of t.dev.reverse) lines.push(`  reverse  ${t.devName}:${r.remote} -> localhost:${r.local}`);
    for (const x of syncPlan?.folders ?? []) lines.push(`  sync     ${x.local} ${x.mode === 'send-only' ? '->' : '<->'} ${x.remote}`);
    f.io.stdout.write(`${lines.join('\n')}\n`);
    f.log.debug(lines[0]!);

    if (f.interactive) {
      const c = await tunnel.connection();
      const command = t.dev.command.length > 0 ? shellJoin(t.dev.command) : undefined;
      await runSession(c, f.io, { command, pty: true, term: f.env.TERM });
      f.io.stderr.write(`The dev container stays active: 'devtool down' ${standalone ? 'removes it' : `restores ${t.devName}`}.\n`);
      return 0;
    }
    f.io.stdout.write(`Forwarding until interrupted (Ctrl-C); the dev container stays active until 'devtool down'.\n`);
    await new Promise<void>((resolve) => {
      const stop = () => {
        process.off('SIGINT', stop);
        process.off('SIGTERM', stop);
        resolve();
      };
      process.on('SIGINT', stop);
      process.on('SIGTERM', stop);
    });
    return 0;
  } finally {
    originalWatch?.stop();
    await sync?.close();
    tunnel?.close();
    release();
  }
};
