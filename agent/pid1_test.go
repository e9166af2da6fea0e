package agent

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"devtool.dev/agent/internal/config"
	"devtool.dev/agent/internal/testutil"
)

// As the real PID 1 of a PID namespace (as in a container) the supervisor
// must handle SIGTERM itself (PID 1 gets no default signal actions) and
// adopt and reap every orphan.
func TestSuperviseAsPID1(t *testing.T) {
	unshare, err := exec.LookPath("unshare")
	if err != nil || os.Geteuid() != 0 {
		t.Skip("needs unshare and root for a PID namespace")
	}
	work := t.TempDir()
	script := `sh -c 'sleep 0.5 &'; trap 'echo TERM > trapped; exit 0' TERM; while :; do sleep 0.1; done`
	cmd := exec.Command(unshare, "--pid", "--fork", "--kill-child", agentBin,
		"supervise", "--no-ssh", "--no-syncthing", "--", "sh", "-c", script)
	cmd.Dir = work
	cmd.Env = append(os.Environ(), config.EnvState+"="+t.TempDir())
	var out testutil.SafeBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() { cmd.Process.Kill() })

	var pid1 int // the supervisor's PID outside the namespace
	testutil.Eventually(t, 5*time.Second, "supervisor running as pid 1", func() error {
		if !strings.Contains(out.String(), "supervising (pid 1,") {
			return errors.New(out.String())
		}
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", cmd.Process.Pid, cmd.Process.Pid))
		if err != nil {
			return err
		}
		pid1, err = strconv.Atoi(strings.TrimSpace(string(data)))
		return err
	})
	time.Sleep(1200 * time.Millisecond) // the orphaned sleep has exited by now
	if z := zombieChildren(pid1); len(z) > 0 {
		t.Fatalf("zombies under PID 1: %v\n%s", z, out.String())
	}
	if !strings.Contains(out.String(), "reaped orphan pid") {
		t.Fatalf("orphan not reaped by PID 1:\n%s", out.String())
	}
	syscall.Kill(pid1, syscall.SIGTERM)
	select {
	case <-exited:
	case <-time.After(10 * time.Second):
		t.Fatalf("PID 1 ignored SIGTERM:\n%s", out.String())
	}
	if data, _ := os.ReadFile(filepath.Join(work, "trapped")); string(data) != "TERM\n" {
		t.Fatalf("user command did not get SIGTERM:\n%s", out.String())
	}
}

// statFields returns /proc/<pid>/stat after the command name (state,
// ppid, ...), or nil if the process is gone.
func statFields(pid int) []string {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return nil
	}
	s := string(data)
	return strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
}

func zombieChildren(ppid int) []int {
	var z []int
	dirs, _ := os.ReadDir("/proc")
	for _, d := range dirs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		if f := statFields(pid); len(f) > 1 && f[0] == "Z" && f[1] == strconv.Itoa(ppid) {
			z = append(z, pid)
		}
	}
	return z
}

// processesWith lists processes whose command line contains s.
func processesWith(s string) []int {
	var pids []int
	dirs, _ := os.ReadDir("/proc")
	for _, d := range dirs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		if cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid)); err == nil &&
			strings.Contains(string(cmdline), s) {
			pids = append(pids, pid)
		}
	}
	return pids
}
