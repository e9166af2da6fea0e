// Package testutil holds helpers shared by the agent's tests: finding the
// pinned Syncthing build, free ports, polling.
package testutil

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// ModuleRoot is the agent module's directory (where build.sh lives).
func ModuleRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if data, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil &&
			bytes.HasPrefix(data, []byte("module devtool.dev/agent\n")) {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("agent module root not found")
		}
		dir = parent
	}
}

var (
	syncthingOnce sync.Once
	syncthingPath string
	syncthingErr  error
)

// SyncthingBinary returns the pinned Syncthing the agent ships:
// $DEVTOOL_SYNCTHING if set, else `build.sh syncthing-path` (built once
// into the build cache, instant afterwards). Tests use the real binary on
// purpose: they prove the config contract against the real thing.
func SyncthingBinary(t testing.TB) string {
	t.Helper()
	syncthingOnce.Do(func() {
		if p := os.Getenv("DEVTOOL_SYNCTHING"); p != "" {
			syncthingPath = p
			return
		}
		var stderr bytes.Buffer
		cmd := exec.Command("bash", filepath.Join(ModuleRoot(t), "build.sh"), "syncthing-path")
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			syncthingErr = fmt.Errorf("build.sh syncthing-path: %v\n%s", err, stderr.String())
			return
		}
		syncthingPath = strings.TrimSpace(string(out))
	})
	if syncthingErr != nil {
		t.Fatal(syncthingErr)
	}
	return syncthingPath
}

// FreePort returns a loopback TCP port that was free a moment ago.
func FreePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// Eventually polls cond every 50 ms until it returns nil or timeout
// passes, then fails with cond's last error.
func Eventually(t testing.TB, timeout time.Duration, what string, cond func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := cond()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not true after %s: %v", what, timeout, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// SafeBuffer is a bytes.Buffer safe for concurrent Write and String
// (process output read while the process runs).
type SafeBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *SafeBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *SafeBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// WaitLog waits up to 5 s until logs holds want.
func WaitLog(t testing.TB, logs *SafeBuffer, want string) {
	t.Helper()
	Eventually(t, 5*time.Second, "log line "+want, func() error {
		if !strings.Contains(logs.String(), want) {
			return fmt.Errorf("log so far:\n%s", logs.String())
		}
		return nil
	})
}
