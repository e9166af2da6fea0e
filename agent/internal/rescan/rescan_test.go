package rescan

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"devtool.dev/agent/internal/config"
	"devtool.dev/agent/internal/testutil"
)

// TestChangesBecomeScanRequests drives a real directory tree and checks
// the requests a fake Syncthing receives. Between steps, settle flushes
// every earlier event, so each expectation sees only its step's requests.
func TestChangesBecomeScanRequests(t *testing.T) {
	app, other := t.TempDir(), t.TempDir()
	// Present before the watch starts.
	mustWrite(t, filepath.Join(app, ".stignore"), "// devtool\nnode_modules\n/build\n*.log\n")
	mustWrite(t, filepath.Join(app, "existing.txt"), "v1")
	mustWrite(t, filepath.Join(app, "doomed.txt"), "bye")
	mustWrite(t, filepath.Join(app, "old-name.txt"), "same")
	mustWrite(t, filepath.Join(app, "olddir", "sub", "kept.go"), "package sub")
	mustWrite(t, filepath.Join(app, "node_modules", "react", "index.js"), "x")
	mustWrite(t, filepath.Join(app, "build", "out.bin"), "x")
	mustWrite(t, filepath.Join(app, ".stfolder", "syncthing-folder-1.txt"), "")

	fake := newFakeSyncthing(t, 0)
	startRescanner(t, fake,
		config.Folder{ID: "devtool-app", Path: app},
		config.Folder{ID: "devtool-other", Path: other})

	// Create a file.
	mustWrite(t, filepath.Join(app, "hello.txt"), "hi")
	fake.expectSub("devtool-app", "hello.txt")

	// A nested directory: reported at its top, and watched all the way
	// down (a file in it is reported by its own path).
	must(t, os.MkdirAll(filepath.Join(app, "src", "pkg"), 0o755))
	fake.expectSub("devtool-app", "src")
	fake.settle("devtool-app", app)
	mustWrite(t, filepath.Join(app, "src", "pkg", "main.go"), "package main")
	fake.expectSub("devtool-app", "src/pkg/main.go")

	// Modify, delete, rename a file.
	fake.settle("devtool-app", app)
	mustWrite(t, filepath.Join(app, "existing.txt"), "v2")
	fake.expectSub("devtool-app", "existing.txt")
	must(t, os.Remove(filepath.Join(app, "doomed.txt")))
	fake.expectSub("devtool-app", "doomed.txt")
	must(t, os.Rename(filepath.Join(app, "old-name.txt"), filepath.Join(app, "new-name.txt")))
	fake.expectSub("devtool-app", "old-name.txt")
	fake.expectSub("devtool-app", "new-name.txt")

	// Rename a directory: both names are reported, and the moved tree is
	// watched under its new name.
	fake.settle("devtool-app", app)
	must(t, os.Rename(filepath.Join(app, "olddir"), filepath.Join(app, "newdir")))
	fake.expectSub("devtool-app", "olddir")
	fake.expectSub("devtool-app", "newdir")
	fake.settle("devtool-app", app)
	mustWrite(t, filepath.Join(app, "newdir", "sub", "fresh.go"), "package sub")
	fake.expectSub("devtool-app", "newdir/sub/fresh.go")

	// Syncthing's own pulls (temp file renamed into place, then its mtime
	// set) are not echoed back as scans; the user's next change is.
	fake.settle("devtool-app", app)
	long := strings.Repeat("n", 150) + ".go"
	for _, name := range []string{"pulled.go", long} {
		final := filepath.Join(app, "newdir", name)
		temp := filepath.Join(app, "newdir", syncthingTempName(name))
		mustWrite(t, temp, "from the laptop")
		must(t, os.Rename(temp, final))
		must(t, os.Chtimes(final, time.Unix(1e9, 0), time.Unix(1e9, 0)))
	}
	fake.settle("devtool-app", app)
	fake.neverScanned("newdir/pulled.go", "newdir/"+long)
	must(t, os.Chmod(filepath.Join(app, "newdir", "pulled.go"), 0o600))
	fake.expectSub("devtool-app", "newdir/pulled.go")

	// Delete a directory tree.
	fake.settle("devtool-app", app)
	must(t, os.RemoveAll(filepath.Join(app, "src")))
	fake.expectSub("devtool-app", "src")

	// The other folder is its own.
	mustWrite(t, filepath.Join(other, "deep", "er", "file.txt"), "x")
	fake.expectSub("devtool-other", "deep")

	// Ignored and Syncthing's own paths: no request names them.
	mustWrite(t, filepath.Join(app, "node_modules", "react", "index.js"), "y")
	mustWrite(t, filepath.Join(app, "node_modules", "new-pkg", "a.js"), "y")
	mustWrite(t, filepath.Join(app, "build", "out.bin"), "y")
	mustWrite(t, filepath.Join(app, ".stfolder", "syncthing-folder-2.txt"), "")
	mustWrite(t, filepath.Join(app, ".syncthing.pulled.go.tmp"), "partial")
	mustWrite(t, filepath.Join(app, "newdir", "~syncthing~x.go.tmp"), "partial")
	must(t, os.MkdirAll(filepath.Join(app, "web", "node_modules"), 0o755))
	fake.expectSub("devtool-app", "web")
	fake.settle("devtool-app", app)
	mustWrite(t, filepath.Join(app, "web", "node_modules", "b.js"), "y")
	fake.settle("devtool-app", app)
	fake.neverScanned("node_modules", "build", ".stfolder", ".syncthing.pulled.go.tmp",
		"newdir/~syncthing~x.go.tmp", "web/node_modules")

	// A changed .stignore: Syncthing is asked to scan everything (what was
	// ignored may not be any more), and newly ignored directories are no
	// longer watched.
	must(t, os.MkdirAll(filepath.Join(app, "later"), 0o755))
	fake.expectSub("devtool-app", "later")
	mustWrite(t, filepath.Join(app, ".stignore"), "node_modules\n/build\nlater\n")
	fake.expectWholeFolder("devtool-app")
	fake.settle("devtool-app", app)
	mustWrite(t, filepath.Join(app, "later", "x.txt"), "x")
	fake.settle("devtool-app", app)
	fake.neverScanned("later/x.txt")

	fake.checkCredentials()
}

// A Syncthing that is down (starting, restarting) fails requests: that
// is logged once, and later requests still go out.
func TestFailedRequestsAreLoggedOnceAndDropped(t *testing.T) {
	app := t.TempDir()
	fake := newFakeSyncthing(t, 3)
	logs := startRescanner(t, fake, config.Folder{ID: "app", Path: app})
	for _, name := range []string{"a.txt", "b.txt", "c.txt", "d.txt"} {
		mustWrite(t, filepath.Join(app, name), name)
		fake.expectSub("app", name)
	}
	if n := strings.Count(logs.String(), "scan request for folder app failed"); n != 1 {
		t.Fatalf("%d failure lines, want 1:\n%s", n, logs.String())
	}
}

// Syncthing creates a missing folder on its first start, maybe after
// the rescanner started; and a folder's volume may go and come back.
func TestRemovedFolderIsWatchedWhenItComesBack(t *testing.T) {
	app := filepath.Join(t.TempDir(), "app")
	must(t, os.MkdirAll(app, 0o755))
	fake := newFakeSyncthing(t, 0)
	logs := startRescanner(t, fake, config.Folder{ID: "app", Path: app})

	must(t, os.RemoveAll(app))
	testutil.WaitLog(t, logs, "folder app: "+app+" was removed; waiting")
	must(t, os.MkdirAll(app, 0o755))
	testutil.Eventually(t, 5*time.Second, "watching again", func() error {
		if n := strings.Count(logs.String(), "folder app: watching"); n != 2 {
			return fmt.Errorf("%d watch starts", n)
		}
		return nil
	})
	mustWrite(t, filepath.Join(app, "first.txt"), "x")
	fake.expectSub("app", "first.txt")
}
