/**
 * One dev container's `up` session, in the steps `up` goes through whether it brings up one dev
 * container or several (up.ts): prepare (the client, the sync plan, said before anything
 * changes), then start (activation, the original's watch, the tunnel and its forwards, the sync),
 * which resolves once the dev container is ready and says so in a few lines for stdout. The deploy
 * step in between is the caller's: several dev containers of one folder share one application.
 */
import { userInfo } from 'node:os';
import { join } from 'node:path';
import type ssh2 from 'ssh2';
import type { Progress } from '../deploy/progress.ts';
import { DevtoolError } from '../base/errors.ts';
import { collectAfterBurst, memorySummary } from '../base/memory.ts';
import type { KubeClient } from '../kube/client.ts';
import type { KubeTarget } from '../kube/target.ts';
import type { Logger } from '../log/logger.ts';
import type { FileSync } from '../sync/file-sync.ts';
import { activate, devPodFailure } from './activate.ts';
import type { AgentImageChoice } from './agent-delivery.ts';
import { pushAgentImage } from './agent-image.ts';
import { agentPrograms } from './agent-binaries.ts';
import { AgentCopies, agentCopyApi } from './agent-inject.ts';
import type { DeployFirstEnv } from './deploy-first.ts';
import { watchOriginal, type OriginalWatch } from './original-watch.ts';
import { captureOutput } from './ssh-program.ts';
import { standaloneImage, type StandaloneImageEnv } from './standalone.ts';
import { agentImage, type DevTarget } from './target.ts';
import { DevTunnel } from './tunnel.ts';
import { DrainedVolume } from './drained-volume.ts';
import { showPath } from '../manifest/project-scope.ts';
import { NamespaceSleepWatch } from './namespace-asleep.ts';
import { SessionPublisher } from './session-publisher.ts';
import { sessionUser } from './session-state.ts';
import { sessionAnnotationWriter } from './session-write.ts';
import { checkWatchLimits, describeFolder, firstSyncSummary, prepareSync, startSync, syncingHow, createFileSync, type SyncPlan } from './up-sync.ts';

/** How long `up` waits for the dev pod (image pulls included). */
const READY_TIMEOUT_MS = 5 * 60_000;
/** How long a closing session waits for its last state (ended) to be written. */
const SESSION_END_MS = 3_000;

/** What a session needs from outside (the command's factory passes itself). */
export interface UpEnv extends DeployFirstEnv, StandaloneImageEnv {
  readonly env: Readonly<NodeJS.ProcessEnv>;
  readonly log: Logger;
  readonly version: string;
  kube(target: KubeTarget): Promise<KubeClient>;
}

export interface PreparedUp {
  readonly t: DevTarget;
  readonly client: KubeClient;
  readonly progress: Progress;
  readonly syncPlan: SyncPlan | undefined;
  /** The devtool-bin image; undefined: the agent is copied in through the Kubernetes API. */
  readonly image: AgentImageChoice | undefined;
}

export interface UpSessionOptions {
  extraEnv: Record<string, string>;
  reset: boolean;
  /** Where "first sync settled" goes once the sync settles in the background. */
  settled(line: string): void;
  /** Aborted when `up` is interrupted while it starts: what the session started here is closed. */
  signal?: AbortSignal;
}

/** A running session: the dev container is ready, its tunnel, forwards and sync run until close(). */
export interface DevSession {
  readonly t: DevTarget;
  /** The state, for stdout: what a script (or a test) waits for. */
  readonly readyLines: string[];
  /** A standalone dev container (autocreate): `down` removes it rather than restoring an original. */
  readonly standalone: boolean;
  connection(): Promise<ssh2.Client>;
  /** The dev pod of the live connection; undefined while it is reconnecting. */
  connectedPod(): string | undefined;
  /** Resolves with the line to stop on once the devtool service put the namespace to sleep (namespace-asleep.ts). */
  readonly asleep: Promise<string>;
  close(): Promise<void>;
}

/** Before anything changes: the cluster client and the sync plan, and what is synchronized (and what is not) said. */
export async function prepareUp(f: UpEnv, t: DevTarget, progress: Progress): Promise<PreparedUp> {
  f.log.debug(`dev container ${t.devName} of ${t.manifest.file}, namespace ${t.namespace}`);
  const image = agentImage(f, t.context);
  const client = await f.kube(t);
  f.log.debug('cluster client ready');
  const syncPlan = await prepareSync(f, t);
  f.log.debug('sync keys and binaries ready');
  for (const x of syncPlan?.folders ?? []) progress.step(`sync ${describeFolder(x, t.manifest.folder)}`);
  for (const note of t.skipped) progress.warn(note);
  return { t, client, progress, syncPlan, image };
}

/**
 * Activates the dev container and starts its tunnel and sync; resolves once it is ready. When a
 * step fails, what this started on this machine is closed; the cluster objects stay as activation
 * left them (`down` removes them, or the caller does: up.ts).
 */
export async function startUpSession(f: UpEnv, p: PreparedUp, o: UpSessionOptions): Promise<DevSession> {
  const { t, client, progress, syncPlan, image } = p;
  const keys = t.state.keys();
  let tunnel: DevTunnel | undefined;
  let sync: FileSync | undefined;
  let originalWatch: OriginalWatch | undefined;
  // A failure after the agent answered must not leave the wait for the API server's ready running.
  const closing = new AbortController();
  // The session's state on its dev Deployment, for the service's dashboard and idle sleep
  // (api/dev-session.ts): written from ready on, never waited for by the sync or the terminal.
  let writeSession: ((value: string) => Promise<void>) | undefined;
  const publisher = new SessionPublisher({
    write: (value) => (writeSession ? writeSession(value) : Promise.reject(new Error('no dev Deployment yet'))),
    debug: (line) => f.log.debug(`${t.devName}: ${line}`),
    user: sessionUser(t.context, () => userInfo().username),
    version: f.version,
    forwards: t.dev.forward.map((fw) => ({ local: fw.local, remote: `${fw.service ?? t.devName}:${fw.remote}` })),
    sync: syncPlan ? { state: 'starting' } : { state: 'off' },
  });
  const close = async () => {
    closing.abort();
    originalWatch?.stop();
    await Promise.all([publisher.end(SESSION_END_MS), sync?.close()]);
    tunnel?.close();
  };
  o.signal?.addEventListener('abort', () => void close(), { once: true });
  const agentCopies = new AgentCopies({
    cluster: agentCopyApi(client),
    programs: (arch) => agentPrograms(arch, f.env),
    context: t.context.name,
    log: (line) => f.log.debug(`${t.devName}: ${line}`),
    copied: (line) => progress.step(line),
  });
  const drained = new DrainedVolume({
    client,
    devName: t.devName,
    notice: (m) => progress.warn(m),
    log: (line) => f.log.debug(`${t.devName}: ${line}`),
  });
  const sleepWatch = new NamespaceSleepWatch(client, t.devName, f.log);
  try {
    const started = new DevTunnel({
      client,
      devName: t.devName,
      hostPublicKey: keys.host.publicKey,
      clientPrivateKey: keys.client.privateKey,
      log: f.log,
      forwards: t.dev.forward,
      reverses: t.dev.reverse,
      // A dev pod that replaced the first one waits for its agent too, when it is copied in; one
      // whose claim is stranded on a drained node gets a new claim (drained-volume.ts).
      noReadyPod: (pods) => {
        drained.offer(pods);
        agentCopies.offer(pods);
        sleepWatch.offer(pods);
      },
      // Not once closing: the dev pod `down` deletes meanwhile is no connection lost to speak of.
      notice: (m) => {
        if (!closing.signal.aborted) progress.warn(m);
      },
      connectionChanged: (connected) => publisher.connectionChanged(connected),
    });
    tunnel = started;
    // Before the swap: a forward's local port that is taken fails here, with the original untouched.
    await started.listen();
    // This machine's sync end starts now, while the dev pod does (FileSync.startLocal).
    if (syncPlan)
      sync = createFileSync(f, t, syncPlan, started, {
        reset: o.reset,
        notice: (m) => progress.warn(m),
        activity: (a) => publisher.syncChanged(a),
        conflict: (folder, name) => publisher.conflict(showPath(join(folder.local, name), t.manifest.folder)),
      });
    const activation = activate(client, t, {
      devtoolVersion: f.version,
      syncthing: syncPlan?.remoteSection,
      extraEnv: o.extraEnv,
      agentImage: image?.image,
      agentCopies,
      ...(image?.fromRegistry ? { pushAgentImage: (arch: string) => pushAgentImage(image.image, arch, f) } : {}),
      hostPrivateKey: keys.host.privateKey,
      clientPublicKey: keys.client.publicKey,
      timeoutMs: READY_TIMEOUT_MS,
      signal: closing.signal,
      step: (m) => progress.step(m),
      notice: (m) => progress.warn(m),
      log: (line) => f.log.debug(`${t.devName}: ${line}`),
      standaloneImage: () => standaloneImage(f, t, progress),
    });
    const { objects, pod, podReady, rebuild, standalone, kind } = await progress.waiting(() => `dev container ${t.devName} to start`, activation);
    writeSession = sessionAnnotationWriter(client, objects.deployment.metadata.name);
    // Keeps the mirror in step with the original while `up` runs (original-watch.ts); a standalone one has none.
    if (!standalone)
      originalWatch = watchOriginal({ client, kind, folder: t.folder, origin: t.origin, objects, rebuild, notice: (m) => progress.warn(m), log: f.log });
    const connectAndSync = async () => {
      await started.start(60_000, pod).catch(async (err: unknown) => {
        const failure = await devPodFailure(client, t.devName, objects).catch(() => undefined);
        throw failure ? new DevtoolError(failure) : err;
      });
      f.log.debug(`${t.devName}: connected to the dev container`);
      if (syncPlan && sync) {
        progress.step('starting the sync (first pass: no local file is overwritten or deleted)');
        const since = Date.now();
        const session = sync;
        const firstSync = await progress.waiting(() => 'the first sync', startSync(t, session));
        progress.step(firstSyncSummary(firstSync, ((Date.now() - since) / 1000).toFixed(1)));
        // The first sync's lists are garbage now; an idle `up` would keep them (memory.ts).
        const afterFirstSync = () => void collectAfterBurst().then(() => f.log.debug(`memory once quiet after the first sync: ${memorySummary()}`));
        if (firstSync.some((r) => r.copied)) {
          void session.settled.then(
            () => {
              o.settled(`first sync settled in ${((Date.now() - since) / 1000).toFixed(1)}s; ${syncingHow(syncPlan.folders)}`);
              afterFirstSync();
            },
            () => undefined,
          );
        } else afterFirstSync();
        const ssh = await started.connection();
        await checkWatchLimits(
          syncPlan,
          (command) => captureOutput(ssh, command),
          (m) => progress.warn(m),
        );
      }
    };
    // Connected and the first pass run while the API server catches up with a pod whose agent
    // already answers (agent-answer.ts); ready once both are done, so every tool then agrees.
    await Promise.all([podReady, connectAndSync()]);
    const readyLines = [`dev container ${objects.deployment.metadata.name} is ready (pod ${pod}, namespace ${t.namespace})`];
    for (const fw of t.dev.forward) readyLines.push(`  forward  localhost:${fw.local} -> ${fw.service ?? t.devName}:${fw.remote}`);
    for (const r of t.dev.reverse) readyLines.push(`  reverse  ${t.devName}:${r.remote} -> localhost:${r.local}`);
    for (const x of syncPlan?.folders ?? []) readyLines.push(`  sync     ${x.local} ${x.mode === 'send-only' ? '->' : '<->'} ${x.remote}`);
    f.log.debug(readyLines[0]!);
    if (sync) publisher.syncChanged(sync.activity());
    publisher.ready();
    return { t, readyLines, standalone, connection: () => started.connection(), connectedPod: () => started.connectedPod, asleep: sleepWatch.asleep, close };
  } catch (err) {
    await close();
    throw err;
  }
}

/** Resolves on Ctrl-C (SIGINT) or SIGTERM (`down` from another terminal), with which: `up`'s sessions then end. */
export function untilInterrupted(): Promise<'SIGINT' | 'SIGTERM'> {
  return new Promise((resolve) => {
    const stop = (signal: 'SIGINT' | 'SIGTERM') => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve(signal);
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
}
