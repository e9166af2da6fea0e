package agent

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// alive: the process exists and is not a zombie waiting to be reaped.
func alive(pid int) bool {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	return len(fields) > 0 && fields[0] != "Z"
}

func TestWithParentEndsWithItsParent(t *testing.T) {
	// sh starts the agent in the background and ends; what the agent became must end too.
	out, err := exec.Command("sh", "-c", agentBin+` with-parent $$ -- sleep 60 >/dev/null 2>&1 & echo $!; sleep 0.5`).Output()
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for alive(pid) {
		if time.Now().After(deadline) {
			exec.Command("kill", "-9", strconv.Itoa(pid)).Run()
			t.Fatalf("process %d (sleep 60 under with-parent) still running 5s after its parent ended", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestWithParentRunsTheProgram(t *testing.T) {
	cmd := exec.Command(agentBin, "with-parent", strconv.Itoa(os.Getpid()), "--", "sh", "-c", "echo $0 $1", "a", "b")
	out, err := cmd.CombinedOutput()
	if err != nil || string(out) != "a b\n" {
		t.Fatalf("got %q, %v", out, err)
	}
}

func TestWithParentRefusesAParentThatIsNotItsOwn(t *testing.T) {
	out, err := exec.Command(agentBin, "with-parent", "1", "--", "true").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "process 1, which started this, has already ended") {
		t.Fatalf("got %q, %v", out, err)
	}
	for _, args := range [][]string{{"x", "--", "true"}, {"12"}, {"12", "true"}} {
		if out, err := exec.Command(agentBin, append([]string{"with-parent"}, args...)...).CombinedOutput(); err == nil {
			t.Fatalf("with-parent %v: accepted (%q)", args, out)
		}
	}
}
