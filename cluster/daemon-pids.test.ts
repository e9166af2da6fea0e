/**
 * cluster/lib/common.sh's pid files, with real processes: a daemon is "running" only when its pid
 * still leads a process whose command line is the one start_daemon recorded. A stale pid file whose
 * pid now names a thread of another process, or another process with the daemon's name in its
 * command line, is not the daemon; stop_daemons leaves such a process alone.
 */
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';

const dir = mkdtempSync(join(tmpdir(), 'daemon-pids-'));
const common = join(import.meta.dirname, 'lib', 'common.sh');
after(() => rmSync(dir, { recursive: true, force: true }));

/** Runs bash with common.sh sourced and RUN/LOGS in the temporary folder; its stdout. */
function sh(script: string): string {
  return execFileSync('bash', ['-c', `source ${JSON.stringify(common)}; RUN=${dir}/run; LOGS=${dir}/logs; ${script}`], { encoding: 'utf8' }).trim();
}
const running = (name: string) => sh(`is_running ${name} && echo yes || echo no`);

test('a daemon start_daemon started is running until stopped, by its recorded command line', () => {
  const pid = sh('start_daemon sleeper sleep 300; cat "$RUN/sleeper.pid"');
  assert.equal(running('sleeper'), 'yes');
  sh('stop_daemons sleeper');
  assert.equal(running('sleeper'), 'no');
  assert.throws(() => process.kill(Number(pid), 0), 'the daemon is gone');
});

test('a daemon is running as soon as start_daemon returns, even when its exec comes late', () => {
  // The background child is bash, then setsid, before it is the daemon; on a busy machine that
  // moment is long enough for a check right after the start to take it for an exit. Here setsid is
  // made slow on purpose.
  const verdict = sh('setsid() { sleep 0.5; exec /usr/bin/setsid "$@"; }; start_daemon late sleep 300; is_running late && echo yes || echo no');
  sh('stop_daemons late');
  assert.equal(verdict, 'yes');
});

test("a stale pid file naming another process's thread, or a process with the daemon's name in its command line, is not the daemon", async (t) => {
  // A process with "containerd" in its command line, as a pod's containerd-shim has.
  const other = spawn('bash', ['-c', 'exec -a containerd-shim-runc-v2 sleep 300']);
  t.after(() => other.kill('SIGKILL'));
  await new Promise((r) => setTimeout(r, 200));
  sh('mkdir -p "$RUN"');
  writeFileSync(join(dir, 'run', 'containerd.pid'), `${other.pid}\n`);
  writeFileSync(join(dir, 'run', 'containerd.cmdline'), '/usr/bin/containerd\0--config\0/x/config.toml\0');
  assert.equal(running('containerd'), 'no', 'the recorded command line differs');

  // A thread id of this test process (Node runs several threads): kill -0 and /proc answer for it.
  const thread = readdirSync('/proc/self/task').find((tid) => Number(tid) !== process.pid);
  assert.ok(thread, 'node has a thread besides its main one');
  writeFileSync(join(dir, 'run', 'node.pid'), `${thread}\n`);
  assert.equal(running('node'), 'no', 'a thread leads no process (pid file from before the recorded command line)');

  // stop_daemons never signals a process that only reuses a stale pid.
  sh('stop_daemons containerd');
  assert.equal(other.exitCode, null);
  assert.doesNotThrow(() => process.kill(other.pid!, 0));
});

test("start_daemon_in runs the daemon in the given network namespace, and it is running by the daemon's own command line", async (t) => {
  // A network namespace held by a process of its own (unshare needs root, as the cluster does).
  const holder = spawn('unshare', ['--net', 'sleep', '300']);
  t.after(() => holder.kill('SIGKILL'));
  await new Promise((r) => setTimeout(r, 300));
  const netns = `/proc/${holder.pid}/ns/net`;
  const pid = sh(`start_daemon_in ${netns} inns sleep 301; cat "$RUN/inns.pid"`);
  t.after(() => sh('stop_daemons inns'));
  assert.equal(running('inns'), 'yes');
  assert.equal(execFileSync('readlink', [`/proc/${pid}/ns/net`], { encoding: 'utf8' }), execFileSync('readlink', [netns], { encoding: 'utf8' }));
  assert.notEqual(
    execFileSync('readlink', [`/proc/${pid}/ns/net`], { encoding: 'utf8' }),
    execFileSync('readlink', ['/proc/self/ns/net'], { encoding: 'utf8' }),
  );
  sh('stop_daemons inns');
  assert.equal(running('inns'), 'no');
});
