/** The devtool executable. All work happens in runCli; this file only wires the real process in. */
import { runCli } from './cli/run.ts';

const code = await runCli(process.argv.slice(2), {
  io: { stdin: process.stdin, stdout: process.stdout, stderr: process.stderr },
  env: process.env,
  cwd: process.cwd(),
});
process.exitCode = code;
