/** The devtool executable. All work happens in runCli; this file only wires the real process in. */
import { ExitCode } from './base/errors.ts';
import { runCli } from './cli/run.ts';
import { rootCommand } from './commands/index.ts';

// Writing to a closed pipe (`devtool help | head -1`): the reader wants no more output, so end
// quietly with 0, as other CLIs do, instead of an unhandled EPIPE stack trace. A closed stderr
// leaves nowhere to report anything: its errors are dropped.
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code === 'EPIPE') process.exit(0);
  throw err;
});
process.stderr.on('error', () => {});

// No top-level await: the bundle is CommonJS, which starts faster than an ES module entry.
void runCli(process.argv.slice(2), rootCommand, {
  // process.stdin is created on first use (a stream, and for a pipe the net module): only a
  // command that reads input or prompts pays for it.
  io: {
    get stdin() {
      return process.stdin;
    },
    stdout: process.stdout,
    stderr: process.stderr,
  },
  env: process.env,
  cwd: process.cwd(),
}).then((code) => {
  process.exitCode = code;
  // Interrupted: what the command abandoned (a wait, a socket, a timer) must not keep it running.
  if (code === ExitCode.interrupted) process.exit();
});
