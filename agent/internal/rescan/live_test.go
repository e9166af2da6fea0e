package rescan

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"devtool.dev/agent/internal/config"
	"devtool.dev/agent/internal/syncthingcfg"
	"devtool.dev/agent/internal/testutil"
)

// TestRealSyncthingNoticesChangeQuickly runs the pinned Syncthing with its
// own watcher off and a periodic rescan far away: only the rescanner can
// make it notice a new file, and it should within milliseconds.
func TestRealSyncthingNoticesChangeQuickly(t *testing.T) {
	dir := t.TempDir()
	folder := filepath.Join(dir, "work")
	st := liveConfig(t, newIdentity(t), newIdentity(t), folder)
	api := startSyncthing(t, filepath.Join(dir, "home"), st)

	// Wait for the start-up scan, so what follows is the rescanner's doing.
	api.waitIdle(t)

	logs := &testutil.SafeBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		Run(ctx, Options{Folders: st.Folders, GUIAddress: st.GUIAddress, APIKey: st.APIKey,
			Logf: func(f string, a ...any) { fmt.Fprintf(logs, f+"\n", a...) }})
	}()
	defer func() { cancel(); <-done }()
	waitLog(t, logs, "folder work: watching")

	start := time.Now()
	mustWrite(t, filepath.Join(folder, "src", "hello.txt"), "from the container\n")
	deadline := start.Add(5 * time.Second)
	for {
		var file struct {
			Local struct{ Size int64 }
		}
		err := api.get("/rest/db/file", url.Values{"folder": {"work"}, "file": {"src/hello.txt"}}, &file)
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

// liveConfig is a contract's syncthing section for one instance whose
// folder is only scanned on request (its own watcher is off).
func liveConfig(t *testing.T, self, peer syncthingcfg.Identity, folder string) config.Syncthing {
	t.Helper()
	c, err := config.Parse([]byte(`{"version":1}`))
	if err != nil {
		t.Fatal(err)
	}
	off := false
	st := c.Syncthing
	st.Certificate, st.Key, st.DeviceID = self.Certificate, self.Key, self.DeviceID
	st.APIKey, st.GUIPassword = "key-"+self.DeviceID[:7], "secret"
	st.GUIAddress = "127.0.0.1:" + strconv.Itoa(testutil.FreePort(t))
	st.ListenAddress = "tcp://127.0.0.1:" + strconv.Itoa(testutil.FreePort(t))
	st.Peer.DeviceID = peer.DeviceID
	st.Folders = []config.Folder{{ID: "work", Path: folder, Label: "work", Type: "sendreceive",
		RescanIntervalS: 3600, FSWatcherEnabled: &off, FSWatcherDelayS: 1}}
	return st
}

func newIdentity(t *testing.T) syncthingcfg.Identity {
	t.Helper()
	id, err := syncthingcfg.NewIdentity()
	if err != nil {
		t.Fatal(err)
	}
	return id
}

type restAPI struct{ base, key string }

func (a restAPI) get(path string, q url.Values, v any) error {
	req, _ := http.NewRequest(http.MethodGet, a.base+path+"?"+q.Encode(), nil)
	req.Header.Set("X-API-Key", a.key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s: %s", path, resp.Status, body)
	}
	return json.Unmarshal(body, v)
}

// waitIdle waits until the folder is neither scanning nor pulling.
func (a restAPI) waitIdle(t *testing.T) {
	t.Helper()
	testutil.Eventually(t, 20*time.Second, "folder idle", func() error {
		var status struct{ State string }
		if err := a.get("/rest/db/status", url.Values{"folder": {"work"}}, &status); err != nil {
			return err
		}
		if status.State != "idle" {
			return fmt.Errorf("state %q", status.State)
		}
		return nil
	})
}

// startSyncthing runs the pinned Syncthing until the test ends.
func startSyncthing(t *testing.T, home string, st config.Syncthing) restAPI {
	t.Helper()
	if _, err := syncthingcfg.WriteHome(home, st); err != nil {
		t.Fatal(err)
	}
	out := &testutil.SafeBuffer{}
	cmd := exec.Command(testutil.SyncthingBinary(t), syncthingcfg.Args(home)...)
	cmd.Env = append(os.Environ(), syncthingcfg.Env()...)
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		exited := make(chan struct{})
		go func() { cmd.Wait(); close(exited) }()
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-exited
		}
		if t.Failed() {
			t.Logf("syncthing log:\n%s", out.String())
		}
	})
	api := restAPI{base: "http://" + st.GUIAddress, key: st.APIKey}
	testutil.Eventually(t, 20*time.Second, "syncthing API up", func() error {
		var pong struct{ Ping string }
		return api.get("/rest/system/ping", nil, &pong)
	})
	return api
}
