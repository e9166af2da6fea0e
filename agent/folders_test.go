package agent

import (
	"os"
	"path/filepath"
	"testing"

	"devtool.dev/agent/internal/config"
)

func TestOpenFoldersLetsOtherUsersRead(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "app")
	if err := os.Mkdir(dir, 0o750); err != nil {
		t.Fatal(err)
	}
	openFolders([]config.Folder{{ID: "a", Path: dir}, {ID: "b", Path: filepath.Join(dir, "missing")}}, t.Logf)
	info, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := info.Mode().Perm(); got != 0o755 {
		t.Fatalf("mode %o, want 755", got)
	}
}
