/** The devtool executable. All work happens in runCli; this file only wires the real process in. */
import { runCli } from './cli/run.ts';
import { rootCommand } from './commands/index.ts';

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
});
