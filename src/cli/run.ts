/**
 * Runs one command line: parse, build the factory, run the handler, map errors to one line on
 * stderr and an exit code. The command tree (commands/index.ts) and everything a command needs
 * come in as arguments (main.ts passes them), so tests call this with their own streams and
 * environment, and cli/ stays below commands/.
 */
import { DEFAULT_FLUSH, flushDue, flushSpool } from '../analytics/sender.ts';
import { createFactory, type Factory, type FactoryOptions } from '../factory.ts';
import { DevtoolHome } from '../home.ts';
import { describeUnreachable } from '../kube/unreachable.ts';
import type { LogLevel } from '../log/logger.ts';
import { commandLineForLog } from './command-line.ts';
import { DevtoolError, ExitCode } from '../base/errors.ts';
import { commandHelp, rootHelp } from './help.ts';
import { parseCommandLine, type ParsedCommandLine } from './parse.ts';
import { globalOptions, type CommandSpec } from './spec.ts';
import { hostPlatform } from '../base/platform.ts';
import { oneLine } from '../base/text.ts';
import { styleFor, type Style } from '../io/style.ts';

export async function runCli(argv: readonly string[], rootCommand: CommandSpec, opts: FactoryOptions): Promise<number> {
  let parsed: ParsedCommandLine;
  try {
    parsed = parseCommandLine(argv, rootCommand);
  } catch (err) {
    return report(err, opts.io.stderr, styleFor(opts.io.stderr, opts.env));
  }
  const { path, spec, invocation } = parsed;
  try {
    // Before anything writes there (the log, analytics): one line now, not a hang or a stack later.
    DevtoolHome.fromEnv(opts.env).ensureUsable();
  } catch (err) {
    return report(err, opts.io.stderr, styleFor(opts.io.stderr, opts.env));
  }
  const f = createFactory({ ...opts, logLevel: (invocation.string('loglevel') as LogLevel | undefined) ?? 'warn' });
  const commandLine = commandLineForLog(argv, [...(spec.options ?? []), ...globalOptions]);
  f.log.hide(commandLine.secrets);
  f.log.debug(`devtool ${f.version}: ${commandLine.text}`);

  if (path.length === 0) {
    // Any word that is not an option was an unknown command (already a usage error): what is
    // left here is `devtool`, `devtool --help` or `devtool --loglevel debug`.
    f.io.stdout.write(rootHelp(rootCommand));
    return ExitCode.ok;
  }
  if (parsed.help || !spec.load) {
    f.io.stdout.write(commandHelp(path, spec));
    return ExitCode.ok;
  }

  let code: number;
  try {
    const handler = await spec.load();
    code = (await handler(f, invocation.input(spec.options ?? []))) ?? ExitCode.ok;
  } catch (err) {
    code = report(err, f.io.stderr, f.log.style, f);
  }
  // Hidden commands are plumbing other programs call (kubectl runs `kubetoken` on every request):
  // not something a user did.
  if (!spec.hidden) {
    f.analytics.track(path.join(' '), code === ExitCode.ok, currentUserId(f));
    await sendAnalytics(f);
    if (code === ExitCode.ok && wantsNotices(f, invocation.string('output'))) await tellNewerVersions(f);
  }
  f.log.debug(`exit ${code}`);
  f.log.close();
  return code;
}

function report(err: unknown, stderr: NodeJS.WritableStream, style: Style, f?: Factory): number {
  if (isPromptCancel(err)) {
    stderr.write('Cancelled\n');
    return ExitCode.interrupted;
  }
  const known = asDevtoolError(err);
  if (known) {
    const hint = known.hint ? `; ${known.hint}` : '';
    stderr.write(`${style.error('Error:')} ${readable(known.message)}${hint}\n`);
    f?.log.fileOnly(`error: ${known.stack ?? known.message}`);
    return known.exitCode;
  }
  const e = err as Error;
  stderr.write(`${style.error('Error:')} ${readable(e?.message ?? String(err))}\n`);
  f?.log.fileOnly(`unexpected error: ${e?.stack ?? String(err)}`);
  return ExitCode.failure;
}

/**
 * A DevtoolError, recognised by shape: each command handler is bundled on its own
 * (scripts/build.mjs) with its own copy of the error classes, so instanceof cannot be relied on.
 */
function asDevtoolError(err: unknown): (DevtoolError & { hint?: string }) | undefined {
  if (err instanceof DevtoolError) return err as DevtoolError & { hint?: string };
  const e = err as { exitCode?: unknown; message?: unknown } | null;
  return e && typeof e.exitCode === 'number' && typeof e.message === 'string' ? (e as DevtoolError & { hint?: string }) : undefined;
}

/** One line; a server that could not be reached is named in plain words (kube/unreachable.ts), whoever let the client's error through. */
function readable(message: string): string {
  const line = oneLine(message);
  return describeUnreachable(line) ?? line;
}

function isPromptCancel(err: unknown): boolean {
  return (err as { name?: string })?.name === 'ExitPromptError';
}

/** Wait at most this long per request to send analytics (a few requests at most per run). */
const ANALYTICS_TIMEOUT_MS = 1500;

/**
 * Spooled analytics records go to the current devtool service only, once a batch is due; the
 * command's output and exit code are settled already, the wait is short and bounded, and nothing
 * here fails the command (sender.ts).
 */
async function sendAnalytics(f: Factory): Promise<void> {
  try {
    if (!f.analytics.isEnabled()) return;
    const service = f.contexts.currentService();
    if (!service) return;
    const opts = { ...DEFAULT_FLUSH, now: () => f.now(), note: (m: string) => f.log.fileOnly(m) };
    if (!flushDue(f.home.analyticsSpool, opts)) return;
    const client = await f.service({ ...service, timeoutMs: ANALYTICS_TIMEOUT_MS });
    const sent = await flushSpool(
      f.home.analyticsSpool,
      async (records) => {
        await client.call('sendAnalytics', { body: { records } });
      },
      { ...opts, accept: (r) => client.acceptsAnalyticsAction(r.action) },
    );
    f.log.debug(`analytics: ${sent} record(s) sent to ${service.url}`);
  } catch (err) {
    f.log.fileOnly(`analytics: not sent: ${(err as Error).message}`);
  }
}

/**
 * Notices beside a command's output are for a person: a terminal on stderr, warnings shown
 * (--loglevel error hides them), and no --output format asked for. A failure keeps its one line.
 */
function wantsNotices(f: Factory, output: string | undefined): boolean {
  return Boolean(f.io.stderr.isTTY) && f.log.shows('warn') && output === undefined;
}

/** The service runs a newer devtool: one line, once a day per service (service/version-notice.ts). Never fails the command. */
async function tellNewerVersions(f: Factory): Promise<void> {
  const seen = f.serviceVersions();
  if (seen.size === 0) return;
  try {
    // Initialized only after a service answered: the start-up bundle carries it but does not run it.
    const notice = await import('../service/version-notice.ts');
    notice.tellNewerVersions(
      {
        cliVersion: f.version,
        now: () => f.now(),
        stampFile: f.home.versionNoticeFile,
        machine: { platform: hostPlatform, arch: process.arch },
        tell: (line) => f.log.warn(line),
      },
      seen,
    );
  } catch (err) {
    f.log.fileOnly(`version notice: ${(err as Error).message}`);
  }
}

function currentUserId(f: Factory): string | undefined {
  try {
    return f.contexts.currentUserId();
  } catch {
    return undefined;
  }
}
