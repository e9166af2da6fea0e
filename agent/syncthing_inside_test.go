package agent

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func withSyncthingInside(t *testing.T, inside bool) {
	t.Helper()
	was := SyncthingInside
	SyncthingInside = inside
	t.Cleanup(func() { SyncthingInside = was })
}

func TestSyncthingProgram(t *testing.T) {
	dir := t.TempDir()
	self := filepath.Join(dir, "devtool-agent")
	beside := filepath.Join(dir, "syncthing")

	withSyncthingInside(t, false)
	if p, a := syncthingProgram(self, "/opt/syncthing"); p != "/opt/syncthing" || a != "" {
		t.Errorf("explicit: got %q %q", p, a)
	}
	if p, a := syncthingProgram(self, ""); p != beside || a != "" {
		t.Errorf("plain agent, no file beside: got %q %q, want the path beside it", p, a)
	}

	withSyncthingInside(t, true)
	if p, a := syncthingProgram(self, ""); p != self || a != "syncthing" {
		t.Errorf("bundle alone: got %q %q, want itself named syncthing", p, a)
	}
	if p, a := syncthingProgram(self, "/opt/syncthing"); p != "/opt/syncthing" || a != "" {
		t.Errorf("bundle, explicit: got %q %q", p, a)
	}
	if err := os.WriteFile(beside, nil, 0o755); err != nil {
		t.Fatal(err)
	}
	if p, a := syncthingProgram(self, ""); p != beside || a != "" {
		t.Errorf("bundle with a syncthing beside: got %q %q, want that file", p, a)
	}
}

func TestFilesIn(t *testing.T) {
	dir := t.TempDir()
	withSyncthingInside(t, false)
	if got := filesIn(dir); !slices.Equal(got, []string{"devtool-agent", "syncthing"}) {
		t.Errorf("plain agent: %v", got)
	}
	withSyncthingInside(t, true)
	if got := filesIn(dir); !slices.Equal(got, []string{"devtool-agent"}) {
		t.Errorf("bundle alone: %v", got)
	}
	if err := os.WriteFile(filepath.Join(dir, "syncthing"), nil, 0o755); err != nil {
		t.Fatal(err)
	}
	if got := filesIn(dir); !slices.Equal(got, []string{"devtool-agent", "syncthing"}) {
		t.Errorf("bundle with a syncthing beside: %v", got)
	}
}
