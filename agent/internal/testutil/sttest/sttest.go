// Package sttest runs the pinned Syncthing for live tests: a contract's
// syncthing section for one instance, the instance itself until the test
// ends, and the REST calls tests make to it.
package sttest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"testing"
	"time"

	"devtool.dev/agent/internal/config"
	"devtool.dev/agent/internal/syncthingcfg"
	"devtool.dev/agent/internal/testutil"
)

// FolderID is the ID of the one folder Config shares.
const FolderID = "work"

// Config is a contract's syncthing section for one instance whose folder
// (ID FolderID) is only scanned on request (its own watcher is off, its
// periodic rescan an hour away) and which peers with peer.
func Config(t testing.TB, self, peer syncthingcfg.Identity, folder string) config.Syncthing {
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
	st.Folders = []config.Folder{{ID: FolderID, Path: folder, Label: FolderID, Type: "sendreceive",
		RescanIntervalS: 3600, FSWatcherEnabled: &off, FSWatcherDelayS: 1}}
	return st
}

// NewIdentity is a fresh Syncthing device identity.
func NewIdentity(t testing.TB) syncthingcfg.Identity {
	t.Helper()
	id, err := syncthingcfg.NewIdentity()
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// API is a running instance's REST API.
type API struct{ Base, Key string }

// Get decodes the JSON answer of GET path?q into v.
func (a API) Get(path string, q url.Values, v any) error {
	req, _ := http.NewRequest(http.MethodGet, a.Base+path+"?"+q.Encode(), nil)
	req.Header.Set("X-API-Key", a.Key)
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

// Post sends POST path?q and fails the test unless it gets 200 OK.
func (a API) Post(t testing.TB, path string, q url.Values) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, a.Base+path+"?"+q.Encode(), nil)
	req.Header.Set("X-API-Key", a.Key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST %s: %s", path, resp.Status)
	}
}

// Scan asks the instance to scan sub of its folder (all of it if sub is
// empty) and waits until that scan is done.
func (a API) Scan(t testing.TB, sub string) {
	t.Helper()
	q := url.Values{"folder": {FolderID}}
	if sub != "" {
		q.Set("sub", sub)
	}
	a.Post(t, "/rest/db/scan", q)
}

// WaitIdle waits until the folder is neither scanning nor pulling.
func (a API) WaitIdle(t testing.TB) {
	t.Helper()
	testutil.Eventually(t, 20*time.Second, "folder idle", func() error {
		var status struct{ State string }
		if err := a.Get("/rest/db/status", url.Values{"folder": {FolderID}}, &status); err != nil {
			return err
		}
		if status.State != "idle" {
			return fmt.Errorf("state %q", status.State)
		}
		return nil
	})
}

// WaitConnected waits until the instance is connected to the device.
func (a API) WaitConnected(t testing.TB, deviceID string) {
	t.Helper()
	testutil.Eventually(t, 30*time.Second, "peers connected", func() error {
		var conns struct {
			Connections map[string]struct{ Connected bool }
		}
		if err := a.Get("/rest/system/connections", nil, &conns); err != nil {
			return err
		}
		if !conns.Connections[deviceID].Connected {
			return fmt.Errorf("not connected: %+v", conns.Connections)
		}
		return nil
	})
}

// Instance is a running Syncthing and its REST API.
type Instance struct {
	API
	home string
	out  *testutil.SafeBuffer
	cmd  *exec.Cmd
}

// Start runs the pinned Syncthing with a home generated from st until
// the test ends (its output is logged if the test failed).
func Start(t testing.TB, home string, st config.Syncthing) *Instance {
	t.Helper()
	if _, err := syncthingcfg.WriteHome(home, st); err != nil {
		t.Fatal(err)
	}
	in := &Instance{API: API{Base: "http://" + st.GUIAddress, Key: st.APIKey}, home: home, out: &testutil.SafeBuffer{}}
	t.Cleanup(func() {
		in.stop()
		if t.Failed() {
			t.Logf("syncthing (%s) log:\n%s", home, in.out.String())
		}
	})
	in.run(t)
	return in
}

// Restart stops the instance (SIGTERM) and starts it again on the same
// home, as the agent's supervisor does after a crash.
func (in *Instance) Restart(t testing.TB) {
	t.Helper()
	in.stop()
	in.run(t)
}

func (in *Instance) run(t testing.TB) {
	t.Helper()
	cmd := exec.Command(testutil.SyncthingBinary(t), syncthingcfg.Args(in.home)...)
	cmd.Env = append(os.Environ(), syncthingcfg.Env()...)
	cmd.Stdout, cmd.Stderr = in.out, in.out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	in.cmd = cmd
	testutil.Eventually(t, 20*time.Second, "syncthing API up", func() error {
		var pong struct{ Ping string }
		return in.Get("/rest/system/ping", nil, &pong)
	})
}

func (in *Instance) stop() {
	if in.cmd == nil {
		return
	}
	cmd := in.cmd
	in.cmd = nil
	cmd.Process.Signal(syscall.SIGTERM)
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	select {
	case <-exited:
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		<-exited
	}
}
