package supervisor

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"devtool.dev/agent/internal/testutil"
)

// These tests run real processes under an in-process supervisor. This
// test binary must not use os/exec: the supervisor's wait4(-1) reaper
// would race with exec.Cmd.Wait (as it would in the agent).

// events records the supervisor's log lines with their times.
type events struct {
	mu    sync.Mutex
	lines []string
	times []time.Time
}

func (e *events) logf(format string, args ...any) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.lines = append(e.lines, fmt.Sprintf(format, args...))
	e.times = append(e.times, time.Now())
}

// matching returns the times of lines matching re.
func (e *events) matching(re string) []time.Time {
	e.mu.Lock()
	defer e.mu.Unlock()
	var ts []time.Time
	for i, l := range e.lines {
		if regexp.MustCompile(re).MatchString(l) {
			ts = append(ts, e.times[i])
		}
	}
	return ts
}

// linesMatching returns the lines matching re.
func (e *events) linesMatching(re string) []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []string
	for _, l := range e.lines {
		if regexp.MustCompile(re).MatchString(l) {
			out = append(out, l)
		}
	}
	return out
}

func (e *events) String() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return strings.Join(e.lines, "\n")
}

func sh(name, script string) Spec {
	return Spec{Name: name, Path: "/bin/sh", Args: []string{"-c", script}, OwnGroup: true}
}

// run starts a supervisor and returns a stop function that cancels it and
// reports how long Run took to return.
func run(t *testing.T, opts Options, specs ...Spec) (*events, func() time.Duration) {
	t.Helper()
	ev := &events{}
	opts.Logf = ev.logf
	if opts.LogDir == "" {
		opts.LogDir = t.TempDir()
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- New(opts, specs...).Run(ctx) }()
	var once sync.Once
	var took time.Duration
	stop := func() time.Duration {
		once.Do(func() {
			start := time.Now()
			cancel()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("Run: %v", err)
				}
			case <-time.After(15 * time.Second):
				t.Fatalf("Run did not return\n%s", ev)
			}
			took = time.Since(start)
		})
		return took
	}
	t.Cleanup(func() { stop() })
	return ev, stop
}

func TestRestartsCrashingChildWithBackoff(t *testing.T) {
	crash := sh("crasher", "exit 1")
	crash.Restart = true
	ev, stop := run(t, Options{BackoffMin: 50 * time.Millisecond, BackoffMax: 400 * time.Millisecond}, crash)
	time.Sleep(1600 * time.Millisecond)
	stop()
	starts := ev.matching(`^crasher: started pid`)
	// 50+100+200+400+400 ms of delays fit in 1.6 s: about 6 starts, where
	// a supervisor without backoff would have made hundreds.
	if len(starts) < 4 || len(starts) > 8 {
		t.Fatalf("%d starts in 1.6 s, want 4..8\n%s", len(starts), ev)
	}
	// The announced delays double up to the cap...
	var delays []time.Duration
	for _, l := range ev.linesMatching(`^crasher: restarting in `) {
		d, err := time.ParseDuration(strings.TrimPrefix(l, "crasher: restarting in "))
		if err != nil {
			t.Fatal(err)
		}
		delays = append(delays, d)
	}
	want := []time.Duration{50, 100, 200, 400, 400, 400}
	for i := range delays {
		if i < len(want) && delays[i] != want[i]*time.Millisecond {
			t.Fatalf("delays %v, want %v ms", delays, want)
		}
	}
	// ...and are honoured (timing under load only adds to them).
	for i := 1; i < len(starts) && i-1 < len(delays); i++ {
		if gap := starts[i].Sub(starts[i-1]); gap < delays[i-1] {
			t.Fatalf("restart %d came after %v, before its delay %v", i, gap, delays[i-1])
		}
	}
}

// A child that ran for StableAfter restarts after the minimum delay again.
func TestBackoffResetsAfterStableRun(t *testing.T) {
	dir := t.TempDir()
	counter := filepath.Join(dir, "n")
	// Crash at once three times, then run 300 ms before each crash.
	script := fmt.Sprintf(`n=$(cat %[1]s 2>/dev/null || echo 0); echo $((n+1)) > %[1]s; [ $n -ge 3 ] && sleep 0.3; exit 1`, counter)
	c := sh("flaky", script)
	c.Restart = true
	ev, stop := run(t, Options{BackoffMin: 50 * time.Millisecond, BackoffMax: 5 * time.Second, StableAfter: 250 * time.Millisecond}, c)
	testutil.Eventually(t, 5*time.Second, "six starts", func() error {
		if n := len(ev.matching(`^flaky: started`)); n < 6 {
			return fmt.Errorf("%d starts", n)
		}
		return nil
	})
	stop()
	delays := ev.matching(`^flaky: restarting in 50ms`)
	if len(delays) < 3 {
		t.Fatalf("backoff did not reset after stable runs\n%s", ev)
	}
}

func TestReapsOrphans(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "orphan.pid")
	release := filepath.Join(dir, "release")
	// The inner shell exits at once, orphaning its background loop; the
	// orphan is re-parented to us (we are a child subreaper) and must be
	// reaped when it exits instead of staying a zombie. The orphan only
	// exits once the test has seen it re-parented: a timed sleep could end
	// first on a loaded machine and be reaped by the inner shell instead.
	user := sh("command", fmt.Sprintf(
		`sh -c 'while [ ! -e %s ]; do sleep 0.05; done & echo $! > %s'; sleep 30`, release, pidFile))
	ev, _ := run(t, Options{}, user)
	var pid int
	testutil.Eventually(t, 5*time.Second, "orphan pid written", func() error {
		data, err := os.ReadFile(pidFile)
		if err != nil {
			return err
		}
		pid, err = strconv.Atoi(strings.TrimSpace(string(data)))
		return err
	})
	testutil.Eventually(t, 5*time.Second, "orphan re-parented to us", func() error {
		if ppid := parentOf(pid); ppid != os.Getpid() {
			return fmt.Errorf("orphan %d has parent %d, want us (%d)", pid, ppid, os.Getpid())
		}
		return nil
	})
	if err := os.WriteFile(release, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, 5*time.Second, "orphan reaped", func() error {
		if st := procState(pid); st != "" {
			return fmt.Errorf("pid %d state %s", pid, st)
		}
		return nil
	})
	if len(ev.matching(fmt.Sprintf(`^reaped orphan pid %d `, pid))) != 1 {
		t.Fatalf("no reap event for %d\n%s", pid, ev)
	}
}

func TestStopsChildrenOnShutdown(t *testing.T) {
	dir := t.TempDir()
	marker := filepath.Join(dir, "terminated")
	polite := sh("polite", fmt.Sprintf(`trap 'echo TERM > %s; exit 0' TERM; while :; do sleep 0.05; done`, marker))
	polite.Restart = true
	ev, stop := run(t, Options{StopTimeout: 5 * time.Second}, polite)
	testutil.Eventually(t, 5*time.Second, "started", func() error {
		if len(ev.matching(`^polite: started`)) == 0 {
			return fmt.Errorf("not yet")
		}
		return nil
	})
	if took := stop(); took > 2*time.Second {
		t.Fatalf("stop took %v for a child that exits on SIGTERM", took)
	}
	if data, _ := os.ReadFile(marker); string(data) != "TERM\n" {
		t.Fatalf("child did not get SIGTERM\n%s", ev)
	}
	if n := len(ev.matching(`^polite: started`)); n != 1 {
		t.Fatalf("child restarted during shutdown (%d starts)", n)
	}
}

func TestKillsChildrenIgnoringSIGTERM(t *testing.T) {
	stubborn := sh("stubborn", `trap '' TERM; while :; do sleep 0.05; done`)
	stubborn.Restart = true
	ev, stop := run(t, Options{StopTimeout: 300 * time.Millisecond}, stubborn)
	testutil.Eventually(t, 5*time.Second, "started", func() error {
		if len(ev.matching(`^stubborn: started`)) == 0 {
			return fmt.Errorf("not yet")
		}
		return nil
	})
	if took := stop(); took > 3*time.Second {
		t.Fatalf("stop took %v", took)
	}
	if len(ev.matching(`SIGKILL`)) == 0 || len(ev.matching(`^stubborn: stopped \(killed by killed\)`)) != 1 {
		t.Fatalf("want SIGKILL after the timeout\n%s", ev)
	}
}

// The user command's exit does not stop the agents, and is not retried.
func TestUserCommandExitKeepsAgents(t *testing.T) {
	logDir := t.TempDir()
	agent := sh("agent", `echo agent output; while :; do sleep 0.05; done`)
	agent.Restart, agent.LogToFile = true, true
	user := sh("command", `exit 5`)
	ev, stop := run(t, Options{LogDir: logDir, BackoffMin: 20 * time.Millisecond}, agent, user)
	testutil.Eventually(t, 5*time.Second, "command exited", func() error {
		if len(ev.matching(`^command: exited \(exit status 5\)`)) == 0 {
			return fmt.Errorf("not yet")
		}
		return nil
	})
	time.Sleep(300 * time.Millisecond)
	if n := len(ev.matching(`^command: started`)); n != 1 {
		t.Fatalf("user command started %d times", n)
	}
	if n := len(ev.matching(`^agent: (exited|stopped)`)); n != 0 {
		t.Fatalf("agent stopped with the user command\n%s", ev)
	}
	stop()
	data, err := os.ReadFile(filepath.Join(logDir, "agent.log"))
	if err != nil || !strings.Contains(string(data), "agent output") {
		t.Fatalf("agent.log: %q, %v", data, err)
	}
}

// parentOf and procState read /proc/<pid>/stat ("" if gone).
func parentOf(pid int) int {
	f := statFields(pid)
	if len(f) < 2 {
		return 0
	}
	n, _ := strconv.Atoi(f[1])
	return n
}

func procState(pid int) string {
	f := statFields(pid)
	if len(f) < 1 {
		return ""
	}
	return f[0]
}

// statFields returns the fields after the command name: state, ppid, ...
func statFields(pid int) []string {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return nil
	}
	s := string(data)
	return strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
}
