package syncthingcfg

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"devtool.dev/agent/internal/config"
	"devtool.dev/agent/internal/testutil"
)

// These tests run the pinned Syncthing build with configs from this
// package: they prove the contract the CLI relies on.

type instance struct {
	t    *testing.T
	st   config.Syncthing
	id   string
	base string
	out  *testutil.SafeBuffer
}

func startInstance(t *testing.T, name string, st config.Syncthing) *instance {
	t.Helper()
	home := filepath.Join(t.TempDir(), name)
	id, err := WriteHome(home, st)
	if err != nil {
		t.Fatal(err)
	}
	in := &instance{t: t, st: st, id: id, base: "http://" + st.GUIAddress, out: &testutil.SafeBuffer{}}
	cmd := exec.Command(testutil.SyncthingBinary(t), Args(home)...)
	cmd.Env = append(os.Environ(), Env()...)
	cmd.Stdout, cmd.Stderr = in.out, in.out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			t.Logf("%s log:\n%s", name, in.out.String())
		}
	})
	testutil.Eventually(t, 20*time.Second, name+" API up", func() error {
		var pong struct{ Ping string }
		if err := in.get("/rest/system/ping", nil, &pong); err != nil {
			return err
		}
		if pong.Ping != "pong" {
			return fmt.Errorf("ping answered %q", pong.Ping)
		}
		return nil
	})
	return in
}

func (in *instance) request(method, path string, q url.Values, v any) error {
	u := in.base + path
	if q != nil {
		u += "?" + q.Encode()
	}
	req, _ := http.NewRequest(method, u, nil)
	req.Header.Set("X-API-Key", in.st.APIKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s %s: %s: %s", method, path, resp.Status, body)
	}
	if v != nil {
		return json.Unmarshal(body, v)
	}
	return nil
}

func (in *instance) get(path string, q url.Values, v any) error {
	return in.request(http.MethodGet, path, q, v)
}

// scan asks for an immediate rescan of one path, as the CLI's own file
// watcher will, instead of waiting for Syncthing's watcher delay.
func (in *instance) scan(folder, sub string) {
	in.t.Helper()
	if err := in.request(http.MethodPost, "/rest/db/scan", url.Values{"folder": {folder}, "sub": {sub}}, nil); err != nil {
		in.t.Fatal(err)
	}
}

func TestSyncthingAcceptsConfig(t *testing.T) {
	self, peer := mustIdentity(t), mustIdentity(t)
	dir := t.TempDir()
	st := instanceConfig(t, self, peer, filepath.Join(dir, "work"), testutil.FreePort(t), testutil.FreePort(t))
	st.Folders[0].MaxConflicts = -1
	st.Folders[0].CaseSensitiveFS = true
	in := startInstance(t, "remote", st)

	// The REST API needs the API key (basic auth alone gets a CSRF 403).
	resp, err := http.Get(in.base + "/rest/system/ping")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode == http.StatusOK {
		t.Fatal("REST API answered without credentials")
	}
	// The GUI user and password (what `devtool status --info` prints)
	// log in to the GUI; a wrong password does not.
	for _, tc := range []struct {
		pass string
		want int
	}{{st.GUIPassword, http.StatusNoContent}, {"wrong", http.StatusForbidden}} {
		body, _ := json.Marshal(map[string]string{"username": st.GUIUser, "password": tc.pass})
		resp, err := http.Post(in.base+"/rest/noauth/auth/password", "application/json", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Fatalf("GUI login with password %q: %s, want %d", tc.pass, resp.Status, tc.want)
		}
	}

	var status struct{ MyID string }
	if err := in.get("/rest/system/status", nil, &status); err != nil {
		t.Fatal(err)
	}
	if status.MyID != self.DeviceID {
		t.Fatalf("running as %s, want %s", status.MyID, self.DeviceID)
	}
	// Syncthing read our settings rather than its defaults.
	var cfg struct {
		Folders []struct {
			ID              string
			Path            string
			DisableFsync    bool
			MaxConflicts    int
			CaseSensitiveFS bool
			Devices         []struct{ DeviceID string }
		}
		Options struct {
			ListenAddresses       []string
			GlobalAnnounceEnabled bool
			LocalAnnounceEnabled  bool
			RelaysEnabled         bool
			NATEnabled            bool
			URAccepted            int
		}
	}
	if err := in.get("/rest/config", nil, &cfg); err != nil {
		t.Fatal(err)
	}
	o := cfg.Options
	if o.GlobalAnnounceEnabled || o.LocalAnnounceEnabled || o.RelaysEnabled || o.NATEnabled || o.URAccepted != -1 ||
		len(o.ListenAddresses) != 1 || o.ListenAddresses[0] != st.ListenAddress {
		t.Fatalf("options not as written: %+v", o)
	}
	if len(cfg.Folders) != 1 || cfg.Folders[0].ID != "work" || !cfg.Folders[0].DisableFsync || len(cfg.Folders[0].Devices) != 2 {
		t.Fatalf("folders not as written: %+v", cfg.Folders)
	}
	if cfg.Folders[0].MaxConflicts != -1 || !cfg.Folders[0].CaseSensitiveFS {
		t.Fatalf("maxConflicts and caseSensitiveFS not as written: %+v", cfg.Folders[0])
	}
	// Syncthing creates the folder and its marker on first start.
	if _, err := os.Stat(filepath.Join(dir, "work", ".stfolder")); err != nil {
		t.Fatal(err)
	}
}

func TestTwoInstancesSync(t *testing.T) {
	remoteID, localID := mustIdentity(t), mustIdentity(t)
	dir := t.TempDir()
	remoteDir, localDir := filepath.Join(dir, "remote"), filepath.Join(dir, "local")
	remoteSync := testutil.FreePort(t)

	// The agent's side only accepts; the CLI's side dials it (in real use
	// through the SSH tunnel's local end, here directly).
	remote := startInstance(t, "remote",
		instanceConfig(t, remoteID, localID, remoteDir, testutil.FreePort(t), remoteSync))
	lst := instanceConfig(t, localID, remoteID, localDir, testutil.FreePort(t), testutil.FreePort(t))
	lst.Peer.Addresses = []string{fmt.Sprintf("tcp://127.0.0.1:%d", remoteSync)}
	fsyncOn := false
	lst.Folders[0].DisableFsync = &fsyncOn
	local := startInstance(t, "local", lst)

	testutil.Eventually(t, 30*time.Second, "peers connected", func() error {
		var conns struct {
			Connections map[string]struct{ Connected bool }
		}
		if err := local.get("/rest/system/connections", nil, &conns); err != nil {
			return err
		}
		if !conns.Connections[remote.id].Connected {
			return fmt.Errorf("not connected: %+v", conns.Connections)
		}
		return nil
	})

	waitFile := func(path, want string) {
		t.Helper()
		testutil.Eventually(t, 30*time.Second, "sync of "+path, func() error {
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			if string(data) != want {
				return fmt.Errorf("content %q", data)
			}
			return nil
		})
	}

	// Container -> laptop.
	os.WriteFile(filepath.Join(remoteDir, "hello.txt"), []byte("from the container\n"), 0o644)
	remote.scan("work", "hello.txt")
	waitFile(filepath.Join(localDir, "hello.txt"), "from the container\n")

	testutil.Eventually(t, 20*time.Second, "completion 100%", func() error {
		var c struct{ Completion float64 }
		if err := local.get("/rest/db/completion", url.Values{"folder": {"work"}, "device": {remote.id}}, &c); err != nil {
			return err
		}
		if c.Completion != 100 {
			return fmt.Errorf("completion %.2f%%", c.Completion)
		}
		return nil
	})

	// Laptop -> container, in a new subdirectory.
	os.MkdirAll(filepath.Join(localDir, "src"), 0o755)
	os.WriteFile(filepath.Join(localDir, "src", "main.go"), []byte("package main\n"), 0o644)
	local.scan("work", "src")
	waitFile(filepath.Join(remoteDir, "src", "main.go"), "package main\n")

	// Deletes propagate.
	os.Remove(filepath.Join(remoteDir, "hello.txt"))
	remote.scan("work", "hello.txt")
	testutil.Eventually(t, 30*time.Second, "delete synced", func() error {
		if _, err := os.Stat(filepath.Join(localDir, "hello.txt")); !os.IsNotExist(err) {
			return fmt.Errorf("still there: %v", err)
		}
		return nil
	})
}
