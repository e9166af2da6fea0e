package rescan

import (
	"context"
	"fmt"
	"net/url"
	"path/filepath"
	"testing"
	"time"

	"devtool.dev/agent/internal/testutil"
	"devtool.dev/agent/internal/testutil/sttest"
)

// TestRealSyncthingNoticesChangeQuickly runs the pinned Syncthing with its
// own watcher off and a periodic rescan far away: only the rescanner can
// make it notice a new file, and it should within milliseconds.
func TestRealSyncthingNoticesChangeQuickly(t *testing.T) {
	dir := t.TempDir()
	folder := filepath.Join(dir, "work")
	st := sttest.Config(t, sttest.NewIdentity(t), sttest.NewIdentity(t), folder)
	api := sttest.Start(t, filepath.Join(dir, "home"), st)

	// Wait for the start-up scan, so what follows is the rescanner's doing.
	api.WaitIdle(t)

	logs := &testutil.SafeBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		Run(ctx, Options{Folders: st.Folders, GUIAddress: st.GUIAddress, APIKey: st.APIKey,
			Logf: func(f string, a ...any) { fmt.Fprintf(logs, f+"\n", a...) }})
	}()
	defer func() { cancel(); <-done }()
	testutil.WaitLog(t, logs, "folder work: watching")

	start := time.Now()
	mustWrite(t, filepath.Join(folder, "src", "hello.txt"), "from the container\n")
	deadline := start.Add(5 * time.Second)
	for {
		var file struct {
			Local struct{ Size int64 }
		}
		err := api.Get("/rest/db/file", url.Values{"folder": {"work"}, "file": {"src/hello.txt"}}, &file)
		if err == nil && file.Local.Size == int64(len("from the container\n")) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("Syncthing did not notice the new file within 5s (last: %v)\nrescanner log:\n%s", err, logs.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	took := time.Since(start)
	t.Logf("Syncthing indexed the new file %s after it was written", took.Round(time.Millisecond))
	// Its own watcher (off here) would take at least fsWatcherDelayS = 1s.
	if took >= time.Second {
		t.Fatalf("took %s, want well under Syncthing's own watcher delay (1s)", took)
	}
}
