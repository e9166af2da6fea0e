//go:build linux

package agent

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// A state directory the agent's user cannot write (root's, 0750, as the
// host-path provisioner makes a claim's folder, and fsGroup not applied):
// supervise stops at once with ExitStateUnwritable, the code the CLI reads
// from the dev container's status to move its files to an emptyDir.
func TestSuperviseStateUnwritableExitCode(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to make a folder that another uid cannot write")
	}
	bin := installAgent(t)
	for d := bin; d != os.TempDir() && d != "/"; d = filepath.Dir(d) {
		os.Chmod(d, 0o755)
	}
	volume := podDir(t)
	state := filepath.Join(volume, "state")
	if err := os.Mkdir(state, 0o750); err != nil {
		t.Fatal(err)
	}
	os.Chown(state, 0, 0)
	cmd := exec.Command(filepath.Join(bin, "devtool-agent"), "supervise", "--no-ssh", "--no-syncthing", "--state", state)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 100042, Gid: 100042, Groups: []uint32{fsGroup}}}
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != ExitStateUnwritable {
		t.Fatalf("want exit code %d, got %v: %s", ExitStateUnwritable, err, out)
	}
	want := "state directory " + state + " (owner 0:0, mode 0750) is not writable by uid 100042 gid 100042"
	if !strings.Contains(string(out), want) || !strings.Contains(string(out), "use a storage class that applies fsGroup") {
		t.Fatalf("want %q and what to change, got: %s", want, out)
	}
}

// Any other failure keeps exit code 1: only this one makes the CLI move the files.
func TestSuperviseOtherFailuresExitOne(t *testing.T) {
	cmd := exec.Command(agentBin, "supervise")
	cmd.Env = append(os.Environ(), "DEVTOOL_AGENT_CONFIG=")
	err := cmd.Run()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("want exit code 1, got %v", err)
	}
}
