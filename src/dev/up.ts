/**
 * `up` of one dev container, or of every dev container of the folder in one process (`up` with no
 * name on a manifest with several `services`, or a Compose application with several services that
 * mount a folder). Each dev container keeps its own state folder, lock, tunnel and Syncthing pair,
 * exactly as `up NAME` has them, so `up NAME` in another terminal, `exec NAME`, `status NAME` and
 * `down NAME` see no difference. With several:
 * - every lock is taken before anything changes (one held by another `up` refuses them all);
 * - the deploy step runs once; a dev container with nothing to swap then fails before any swap;
 *   the dev containers come up side by side, their progress lines prefixed with `[name]`;
 * - when one fails, the sessions that started are closed and the dev containers this `up`
 *   activated are restored as `down` restores them (one that was already active from this folder
 *   stays active, as it was), and the error names the one that failed;
 * - no shell is opened (which one?): `up` says how to open one, `devtool exec NAME -- sh`;
 * - Ctrl-C ends every session; the dev containers stay active until `devtool down`;
 * - `down NAME` from another terminal ends that one's session here and the others go on; `up`
 *   ends with the last.
 */
import { DevtoolError } from '../base/errors.ts';
import { interruptible } from '../base/interrupt.ts';
import { Progress } from '../deploy/progress.ts';
import type { IOStreams } from '../factory.ts';
import type { KubeClient } from '../kube/client.ts';
import { readMirror } from './activate.ts';
import { deactivate, deactivateApi } from './deactivate.ts';
import { checkDeployFlag, deployIfNeeded } from './deploy-first.ts';
import { FOLDER_ANNOTATION, mirrorName } from './names.ts';
import { findOriginal, notFoundMessage } from './original.ts';
import { runSshProgram, shellJoin } from './ssh-program.ts';
import type { DevTarget } from './target.ts';
import { prepareUp, startUpSession, untilInterrupted, type DevSession, type PreparedUp, type UpEnv, type UpSessionOptions } from './up-session.ts';
import { shellLoop, type ShellEnd } from './up-shell.ts';

export interface UpCommandEnv extends UpEnv {
  readonly io: IOStreams;
  readonly interactive: boolean;
}

export interface UpOptions {
  extraEnv: Record<string, string>;
  reset: boolean;
  /** --deploy */
  deploy: boolean;
}

/** One dev container: today's `up` (the shell in a terminal, else forwarding until interrupted). */
export async function upOne(f: UpCommandEnv, t: DevTarget, o: UpOptions): Promise<number> {
  checkDeployFlag(f, t, o.deploy);
  const release = t.state.lock(t.devName);
  let session: DevSession | undefined;
  try {
    const progress = new Progress(f.interactive ? terminalLines(f.io.stderr) : f.io.stderr, f.now, f.log);
    const start: { prepared?: PreparedUp; activeBefore?: boolean } = {};
    session = await interruptible(
      async (signal) => {
        const prepared = await prepareUp(f, t, progress);
        start.prepared = prepared;
        await deployIfNeeded(f, t, prepared.client, o.deploy, progress);
        start.activeBefore = await activeFromHere(prepared.client, t);
        return startOrRestore(f, prepared, start.activeBefore, {
          ...o,
          signal,
          // Said on stderr only without a shell, where it would land in the middle of the prompt.
          settled: (line) => (f.interactive ? f.log.info(line) : progress.step(line)),
        });
      },
      { graceMs: INTERRUPT_GRACE_MS, left: () => leftByInterruptedUp(t, start.prepared, start.activeBefore) },
    );
    f.io.stdout.write(`${session.readyLines.join('\n')}\n`);
    const stays = `The dev container stays active: 'devtool down' ${session.standalone ? 'removes it' : `restores ${t.devName}`}.\n`;
    if (f.interactive) {
      const end = await shellUntilEnd(f, session, progress);
      if ('stopped' in end && end.stopped instanceof Asleep) throw new DevtoolError(end.stopped.message);
      if ('stopped' in end && end.stopped === 'SIGTERM') {
        f.io.stderr.write(`'devtool up' was stopped (SIGTERM, as 'devtool down' from another terminal sends): its shell, sync and forwards have ended.\n`);
        return 0;
      }
      f.io.stderr.write(stays);
      return 0;
    }
    f.io.stdout.write(`Forwarding until interrupted (Ctrl-C); the dev container stays active until 'devtool down'.\n`);
    // SIGTERM is `down` from another terminal, which restores it.
    const end = await Promise.race([untilInterrupted(), session.asleep.then((line) => new Asleep(line))]);
    if (end instanceof Asleep) throw new DevtoolError(end.message);
    if (end === 'SIGINT') f.io.stderr.write(stays);
    return 0;
  } finally {
    await session?.close();
    release();
  }
}

/** Why a running `up` stops when the devtool service put its namespace to sleep (namespace-asleep.ts): the one line to say. */
class Asleep {
  constructor(readonly message: string) {}
}

/** How long an interrupted start has to close what it started on this machine. */
const INTERRUPT_GRACE_MS = 3_000;

/**
 * Starts the session; when a step after the swap fails (the dev pod never starts, the tunnel or
 * the sync fails), the swap is undone as `down` undoes it, unless the dev container was already
 * active from this folder before (then it stays, as it was), and the error says which.
 */
async function startOrRestore(f: UpCommandEnv, p: PreparedUp, activeBefore: boolean, o: UpSessionOptions): Promise<DevSession> {
  try {
    return await startUpSession(f, p, o);
  } catch (err) {
    // Interrupted: what is left is said by the interruption, and undone only when asked.
    if (o.signal?.aborted || activeBefore) throw err;
    const e = err as DevtoolError;
    if (!(await restoreIfActivated(p, p.progress))) throw err;
    const undone =
      p.t.dev.autocreate && !(await findOriginal(p.client, p.t.devName, p.t.dev)) ? 'removed the standalone dev container' : `restored ${p.t.devName}`;
    throw new DevtoolError(`${e.message}; ${undone}, so nothing this 'up' changed is left`, typeof e.exitCode === 'number' ? e.exitCode : undefined);
  }
}

/** After Ctrl-C while `up` was starting: what it left in the cluster, and the ways on. */
async function leftByInterruptedUp(t: DevTarget, p: PreparedUp | undefined, activeBefore: boolean | undefined): Promise<string> {
  const active = p ? await activeFromHere(p.client, t).catch(() => undefined) : false;
  if (active === false) return `'up ${t.devName}' stopped before it changed anything in the cluster`;
  if (activeBefore)
    return `${t.devName} stays in development as it was before; 'devtool up ${t.devName}' connects again, 'devtool down ${t.devName}' restores it`;
  const state = active === undefined ? 'may be in development (the cluster did not answer)' : 'is in development, its dev container perhaps still starting';
  return `${t.devName} ${state}: 'devtool up ${t.devName}' goes on from there, 'devtool down ${t.devName}' restores it`;
}

/**
 * The shell in the dev container, reopened in the new dev pod whenever its connection goes
 * (up-shell.ts), until it exits or `up` is asked to stop: SIGTERM (`devtool down` from another
 * terminal), or SIGINT while no shell is open (Ctrl-C then reaches this process, not the shell).
 */
async function shellUntilEnd(f: UpCommandEnv, session: DevSession, progress: Progress): Promise<ShellEnd> {
  const { t } = session;
  const command = t.dev.command.length > 0 ? shellJoin(t.dev.command) : undefined;
  const stopping = new AbortController();
  const stop = (signal: NodeJS.Signals) => stopping.abort(signal);
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  void session.asleep.then((line) => stopping.abort(new Asleep(line)));
  try {
    return await shellLoop({
      connection: () => session.connection(),
      shell: (c, signal) => runSshProgram(c, f.io, { command, pty: true, term: f.env.TERM, signal }),
      connectedPod: () => session.connectedPod(),
      notice: (m) => progress.warn(m),
      stop: stopping.signal,
      debug: (m) => f.log.debug(m),
    });
  } finally {
    process.off('SIGTERM', stop);
    process.off('SIGINT', stop);
  }
}

/**
 * Lines for a terminal that a shell may have in raw mode, where a line feed does not return the
 * cursor: each line ends with both, and so starts at the left edge in either mode.
 */
function terminalLines(out: IOStreams['stderr']): { write(text: string): unknown } {
  return { write: (text: string) => out.write(out.isTTY ? text.replace(/\r?\n/g, '\r\n') : text) };
}

/** Every dev container of the folder in this process (see the top of this file). */
export async function upSeveral(f: UpCommandEnv, targets: readonly DevTarget[], o: UpOptions): Promise<number> {
  checkDeployFlag(f, targets[0]!, o.deploy);
  const releases = lockAll(targets);
  const sessions: DevSession[] = [];
  try {
    const progress = new Progress(f.io.stderr, f.now, f.log);
    const names = targets.map((t) => t.devName);
    progress.step(`bringing up ${names.length} dev containers: ${names.join(', ')} (lines of one start with [name])`);
    const start: { prepared: PreparedUp[]; activeBefore?: boolean[] } = { prepared: [] };
    sessions.push(
      ...(await interruptible((signal) => startSeveral(f, targets, o, progress, signal, start), {
        graceMs: INTERRUPT_GRACE_MS,
        left: () => leftBySeveralInterrupted(start.prepared, start.activeBefore),
      })),
    );
    for (const s of sessions) f.io.stdout.write(`${s.readyLines.join('\n')}\n`);
    if (f.interactive) {
      f.io.stderr.write(
        `${names.length} dev containers are up, so no shell opens here: open one in another terminal with ` +
          `${names.map((n) => `'devtool exec ${n} -- sh'`).join(' or ')}; ` +
          'Ctrl-C ends the sync and forwards here.\n',
      );
    }
    f.io.stdout.write(`Forwarding until interrupted (Ctrl-C); the dev containers stay active until 'devtool down'.\n`);
    const leaving = leaveWhenAsked(sessions, releases, progress);
    const end = await Promise.race([untilInterrupted(), leaving.allLeft, ...sessions.map((s) => s.asleep.then((line) => new Asleep(line)))]);
    leaving.stop();
    if (end instanceof Asleep) throw new DevtoolError(end.message);
    if (sessions.length > 0) f.io.stderr.write(`The dev containers stay active: 'devtool down' restores ${sessions.map((s) => s.t.devName).join(', ')}.\n`);
    return 0;
  } finally {
    await closeAll(sessions);
    for (const release of releases) release();
  }
}

/** The start of `upSeveral`: every session started, or every swap this `up` made undone and the failure said. */
async function startSeveral(
  f: UpCommandEnv,
  targets: readonly DevTarget[],
  o: UpOptions,
  progress: Progress,
  signal: AbortSignal,
  start: { prepared: PreparedUp[]; activeBefore?: boolean[] },
): Promise<DevSession[]> {
  const { prepared } = start;
  for (const t of targets) prepared.push(await prepareUp(f, t, progress.child(t.devName)));
  // One application: deployed at most once (a forced deploy deploys it all; otherwise the first
  // dev container whose workload is missing deploys it, and the others then find theirs).
  for (const [i, p] of prepared.entries()) {
    if (o.deploy && i > 0) break;
    await deployIfNeeded(f, p.t, p.client, o.deploy, progress);
  }
  // A dev container with nothing to swap (a typo, a workload not deployed) fails before any swap.
  for (const p of prepared) {
    if (!p.t.dev.autocreate && !(await findOriginal(p.client, p.t.devName, p.t.dev)))
      throw new DevtoolError(`dev container ${p.t.devName}: ${notFoundMessage(p.t.devName, p.t.dev, p.t.namespace)}; nothing was changed`);
  }
  const activeBefore = await Promise.all(prepared.map((p) => activeFromHere(p.client, p.t)));
  start.activeBefore = activeBefore;
  const results = await Promise.allSettled(
    prepared.map((p) =>
      startUpSession(f, p, {
        extraEnv: o.extraEnv,
        reset: o.reset,
        signal,
        settled: (line) => (f.interactive ? f.log.info(`[${p.t.devName}] ${line}`) : p.progress.step(line)),
      }),
    ),
  );
  const sessions = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
  // Interrupted: what is left is said by the interruption, and undone only when asked.
  if (signal.aborted) {
    await closeAll(sessions);
    signal.throwIfAborted();
  }
  const failed = prepared.flatMap((p, i) => (results[i]!.status === 'rejected' ? [{ p, err: (results[i] as PromiseRejectedResult).reason as Error }] : []));
  if (failed.length > 0) {
    await closeAll(sessions.splice(0));
    // Several failures: each said here; the last line says the first.
    if (failed.length > 1) for (const x of failed) progress.fail(`${x.p.t.devName}: ${x.err.message}`);
    const restored: string[] = [];
    const kept: string[] = [];
    for (const [i, p] of prepared.entries()) {
      if (activeBefore[i]) kept.push(p.t.devName);
      else if (await restoreIfActivated(p, progress.child(p.t.devName))) restored.push(p.t.devName);
    }
    throw new DevtoolError(
      failureLine(
        failed.map((x) => ({ name: x.p.t.devName, message: x.err.message })),
        restored,
        kept,
      ),
    );
  }
  return sessions;
}

/** After Ctrl-C while several dev containers were starting: which are left in development, and the ways on. */
async function leftBySeveralInterrupted(prepared: readonly PreparedUp[], activeBefore: readonly boolean[] | undefined): Promise<string> {
  const active = await Promise.all(prepared.map((p) => activeFromHere(p.client, p.t).catch(() => true)));
  const left = prepared.filter((_, i) => active[i] && !activeBefore?.[i]).map((p) => p.t.devName);
  const kept = prepared.filter((_, i) => activeBefore?.[i]).map((p) => p.t.devName);
  if (left.length === 0 && kept.length === 0) return `'up' stopped before it changed anything in the cluster`;
  const parts = [
    ...(left.length > 0 ? [`${left.join(', ')} ${left.length === 1 ? 'is' : 'are'} in development, perhaps still starting`] : []),
    ...(kept.length > 0 ? [`${kept.join(', ')} ${kept.length === 1 ? 'stays' : 'stay'} in development as before`] : []),
  ];
  return `${parts.join('; ')}: 'devtool up' goes on from there, 'devtool down' restores them`;
}

/**
 * `down NAME` from another terminal (DevState.askHolderToLeave): that dev container's session ends
 * here, its lock is let go, and the others go on. `sessions` keeps the ones still running; the
 * promise resolves once none is left. `releases[i]` is the lock of `sessions[i]`.
 */
function leaveWhenAsked(sessions: DevSession[], releases: readonly (() => void)[], progress: Progress): { allLeft: Promise<void>; stop(): void } {
  const lockOf = new Map(sessions.map((s, i) => [s, releases[i]!]));
  const stops: (() => void)[] = [];
  const allLeft = new Promise<void>((resolve) => {
    for (const s of [...sessions]) {
      const leave = async () => {
        sessions.splice(sessions.indexOf(s), 1);
        const others = sessions.map((x) => x.t.devName);
        await s.close().catch(() => undefined);
        lockOf.get(s)!();
        progress
          .child(s.t.devName)
          .step(
            `'devtool down ${s.t.devName}' ended its sync and forwards here` +
              (others.length > 0 ? `; ${others.join(', ')} ${others.length === 1 ? 'goes' : 'go'} on` : ''),
          );
        if (sessions.length === 0) resolve();
      };
      stops.push(s.t.state.onLeaveRequest(() => void leave()));
    }
  });
  return {
    allLeft,
    stop: () => {
      for (const stop of stops) stop();
    },
  };
}

/**
 * Closes the sessions together: Ctrl-C reaches the local Syncthings too (one process group), and a
 * session still waiting its turn would take its Syncthing's exit for a crash and restart it.
 */
async function closeAll(sessions: readonly DevSession[]): Promise<void> {
  await Promise.all(sessions.map((s) => s.close()));
}

/** Every dev container's lock, or none: one held by another `up` refuses them all, naming the others. */
export function lockAll(targets: readonly Pick<DevTarget, 'devName' | 'state'>[]): (() => void)[] {
  const releases: (() => void)[] = [];
  try {
    for (const t of targets) releases.push(t.state.lock(t.devName));
    return releases;
  } catch (err) {
    for (const release of releases) release();
    const busy = targets[releases.length]!.devName;
    const others = targets.filter((t) => t.devName !== busy).map((t) => `'devtool up ${t.devName}'`);
    throw new DevtoolError(`${(err as Error).message}; bring up the others one by one (${others.join(', ')})`);
  }
}

/** Whether the dev container is in dev mode from this folder (its original, or its standalone Deployment, says so). */
async function activeFromHere(client: KubeClient, t: DevTarget): Promise<boolean> {
  const original = await findOriginal(client, t.devName, t.dev);
  if (original?.metadata.annotations?.[FOLDER_ANNOTATION] === t.folder) return true;
  const mirror = await readMirror(client, mirrorName(original?.metadata.name ?? t.devName));
  return mirror?.metadata?.annotations?.[FOLDER_ANNOTATION] === t.folder;
}

/** `down` for a dev container this `up` activated (and only then: another folder's is never touched). */
async function restoreIfActivated(p: PreparedUp, lines: Progress): Promise<boolean> {
  try {
    if (!(await activeFromHere(p.client, p.t))) return false;
    await deactivate(deactivateApi(p.client), p.t, {
      volumes: false,
      timeoutMs: 2 * 60_000,
      step: (m) => lines.step(m),
      warn: (m) => lines.warn(m),
      // Activated from this folder just now: never another folder's to take over.
      takeOver: async () => undefined,
    });
    return true;
  } catch (err) {
    lines.warn(`could not restore it (${(err as Error).message}): run 'devtool down ${p.t.devName}'`);
    return false;
  }
}

/** The one line that says which did not come up, why, and what is left. */
export function failureLine(failed: readonly { name: string; message: string }[], restored: readonly string[], kept: readonly string[]): string {
  const first = failed[0]!;
  const reason = failed.length === 1 ? first.message : `${first.name}: ${first.message} (the lines above say the others')`;
  const after = [
    restored.length > 0 ? `restored ${restored.join(', ')} (nothing this 'up' activated is left)` : "nothing this 'up' activated is left",
    ...(kept.length > 0 ? [`${kept.join(', ')} ${kept.length === 1 ? 'stays' : 'stay'} active as before`] : []),
  ];
  return `dev container${failed.length === 1 ? '' : 's'} ${failed.map((x) => x.name).join(', ')} did not come up: ${reason}; ${after.join('; ')}`;
}
