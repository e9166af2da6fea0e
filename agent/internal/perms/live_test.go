package perms

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"devtool.dev/agent/internal/testutil"
	"devtool.dev/agent/internal/testutil/sttest"
)

// pair is two real Syncthing instances sharing folder "work" over
// loopback, set up as devtool sets them up: a laptop-like one that keeps
// permission bits and dials, and a container-like one that ignores them
// and runs the applier.
type pair struct {
	laptopDir, containerDir string
	laptop, container       *sttest.Instance
	logs                    *testutil.SafeBuffer // the applier's
	containerID             string
}

func startPair(t *testing.T) *pair {
	t.Helper()
	dir := t.TempDir()
	laptopID, containerID := sttest.NewIdentity(t), sttest.NewIdentity(t)
	p := &pair{laptopDir: filepath.Join(dir, "laptop"), containerDir: filepath.Join(dir, "container")}
	laptopCfg := sttest.Config(t, laptopID, containerID, p.laptopDir)
	containerCfg := sttest.Config(t, containerID, laptopID, p.containerDir)
	containerCfg.Folders[0].IgnorePerms = true
	laptopCfg.Peer.Addresses = []string{containerCfg.ListenAddress}
	p.container = sttest.Start(t, filepath.Join(dir, "container-home"), containerCfg)
	p.laptop = sttest.Start(t, filepath.Join(dir, "laptop-home"), laptopCfg)
	p.laptop.WaitConnected(t, containerID.DeviceID)
	p.containerID = containerID.DeviceID

	logs := &testutil.SafeBuffer{}
	p.logs = logs
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		Run(ctx, Options{Folders: containerCfg.Folders, GUIAddress: containerCfg.GUIAddress, APIKey: containerCfg.APIKey,
			SelfDeviceID: containerID.DeviceID, Logf: func(f string, a ...any) { fmt.Fprintf(logs, f+"\n", a...) }})
	}()
	t.Cleanup(func() {
		cancel()
		<-done
		if t.Failed() {
			t.Logf("applier log:\n%s", logs.String())
		}
	})
	p.laptop.WaitIdle(t)
	p.container.WaitIdle(t)
	return p
}

// write creates or rewrites rel below dir with exactly mode.
func write(t *testing.T, dir, rel, content string, mode os.FileMode) {
	t.Helper()
	path := filepath.Join(dir, rel)
	must(t, os.MkdirAll(filepath.Dir(path), 0o755))
	must(t, os.WriteFile(path, []byte(content), 0o600))
	must(t, os.Chmod(path, mode))
}

// waitFile waits until rel below dir has content, and returns its mode.
func waitFile(t *testing.T, dir, rel, content string) os.FileMode {
	t.Helper()
	testutil.Eventually(t, 30*time.Second, "sync of "+rel, func() error {
		data, err := os.ReadFile(filepath.Join(dir, rel))
		if err == nil && string(data) != content {
			err = fmt.Errorf("content %q", data)
		}
		return err
	})
	return modeOf(t, filepath.Join(dir, rel))
}

// settled waits until both ends are idle and each has all the other has.
func (p *pair) settled(t *testing.T) {
	t.Helper()
	for _, api := range []*sttest.Instance{p.laptop, p.container} {
		api.WaitIdle(t)
	}
	testutil.Eventually(t, 30*time.Second, "both ends in sync", func() error {
		for _, api := range []*sttest.Instance{p.laptop, p.container} {
			var st struct{ NeedTotalItems int }
			if err := api.Get("/rest/db/status", url.Values{"folder": {sttest.FolderID}}, &st); err != nil {
				return err
			}
			if st.NeedTotalItems != 0 {
				return fmt.Errorf("%d items needed", st.NeedTotalItems)
			}
		}
		return nil
	})
}

// version is one end's own index entry of rel ("laptop" or "container"):
// it changes when that end announces a change, or takes the other's.
func (p *pair) version(t *testing.T, end, rel string) string {
	t.Helper()
	api := p.container
	if end == "laptop" {
		api = p.laptop
	}
	var fi struct {
		Local struct {
			Version []string `json:"version"`
		} `json:"local"`
	}
	must(t, api.Get("/rest/db/file", url.Values{"folder": {sttest.FolderID}, "file": {rel}}, &fi))
	return fmt.Sprint(fi.Local.Version)
}

// chmodScanned sets rel's mode on one end ("laptop" or "container"), has
// that end scan it, waits until both ends are in sync, and returns that
// end's version of rel before and after: equal if the chmod was not
// announced.
func (p *pair) chmodScanned(t *testing.T, end, rel string, mode os.FileMode) (before, after string) {
	t.Helper()
	dir, api := p.containerDir, p.container
	if end == "laptop" {
		dir, api = p.laptopDir, p.laptop
	}
	before = p.version(t, end, rel)
	must(t, os.Chmod(filepath.Join(dir, rel), mode))
	api.Scan(t, rel)
	p.settled(t)
	return before, p.version(t, end, rel)
}

// TestLaptopDecidesPermissionBits runs the four directions of
// docs/sync.md's "Permission bits: the laptop decides" between two real
// Syncthing instances.
func TestLaptopDecidesPermissionBits(t *testing.T) {
	p := startPair(t)

	// (a) Made on the laptop with exec bits: they arrive (the container's
	// Syncthing alone would write 0644). A plain file and a directory too.
	write(t, p.laptopDir, "bin/run.sh", "#!/bin/sh\n", 0o755)
	write(t, p.laptopDir, "bin/readme", "plain\n", 0o644)
	must(t, os.Chmod(filepath.Join(p.laptopDir, "bin"), 0o750))
	p.laptop.Scan(t, "")
	waitFile(t, p.containerDir, "bin/run.sh", "#!/bin/sh\n")
	waitMode(t, filepath.Join(p.containerDir, "bin/run.sh"), 0o755)
	waitMode(t, filepath.Join(p.containerDir, "bin"), 0o750)
	if got := modeOf(t, filepath.Join(p.containerDir, "bin/readme")); got != 0o644 {
		t.Errorf("(a) bin/readme: %v in the container, want 0644", got)
	}

	// (b) `chmod +x` on the laptop of a file both ends have: it arrives.
	write(t, p.laptopDir, "tool.sh", "echo tool\n", 0o644)
	p.laptop.Scan(t, "tool.sh")
	if got := waitFile(t, p.containerDir, "tool.sh", "echo tool\n"); got != 0o644 {
		t.Fatalf("(b) tool.sh first arrived %v, want 0644", got)
	}
	p.settled(t)
	must(t, os.Chmod(filepath.Join(p.laptopDir, "tool.sh"), 0o755))
	p.laptop.Scan(t, "tool.sh")
	waitMode(t, filepath.Join(p.containerDir, "tool.sh"), 0o755)

	// (c) Made in the container with exec bits: the laptop gets the file
	// without them.
	write(t, p.containerDir, "planted.sh", "#!/bin/sh\nrm -rf ~\n", 0o755)
	p.container.Scan(t, "planted.sh")
	if got := waitFile(t, p.laptopDir, "planted.sh", "#!/bin/sh\nrm -rf ~\n"); got&0o111 != 0 {
		t.Errorf("(c) planted.sh arrived on the laptop as %v, want no exec bit", got)
	}
	p.settled(t)
	if got := modeOf(t, filepath.Join(p.containerDir, "planted.sh")); got != 0o755 {
		t.Errorf("(c) planted.sh in the container: %v, want it left 0755", got)
	}

	// (d) `chmod +x` in the container of a file from the laptop: nothing
	// is announced, the laptop's file keeps its mode.
	write(t, p.laptopDir, "data.txt", "data\n", 0o644)
	p.laptop.Scan(t, "data.txt")
	waitFile(t, p.containerDir, "data.txt", "data\n")
	p.settled(t)
	before, after := p.chmodScanned(t, "container", "data.txt", 0o755)
	if after != before {
		t.Errorf("(d) the container announced its chmod: version %s -> %s", before, after)
	}
	testutil.Eventually(t, 30*time.Second, "the laptop has the container's version", func() error {
		if v := p.version(t, "laptop", "data.txt"); v != after {
			return fmt.Errorf("laptop %s, container %s", v, after)
		}
		return nil
	})
	if got := modeOf(t, filepath.Join(p.laptopDir, "data.txt")); got != 0o644 {
		t.Errorf("(d) data.txt on the laptop: %v, want 0644", got)
	}
}

// TestContainerSyncthingRestarts: the new Syncthing numbers its events
// from 1 again and forgets the old subscription; what it pulls afterwards
// still gets the laptop's bits.
func TestContainerSyncthingRestarts(t *testing.T) {
	p := startPair(t)
	for i := range 20 { // events the new Syncthing's will not outnumber
		write(t, p.laptopDir, fmt.Sprintf("before/%02d.sh", i), "x\n", 0o755)
	}
	p.laptop.Scan(t, "")
	waitFile(t, p.containerDir, "before/19.sh", "x\n")
	waitMode(t, filepath.Join(p.containerDir, "before/19.sh"), 0o755)
	p.settled(t)

	p.container.Restart(t)
	p.laptop.WaitConnected(t, p.containerID)
	write(t, p.laptopDir, "after.sh", "after\n", 0o755)
	p.laptop.Scan(t, "after.sh")
	waitFile(t, p.containerDir, "after.sh", "after\n")
	waitMode(t, filepath.Join(p.containerDir, "after.sh"), 0o755)
	// startTime is whole seconds: a restart within the second of the start before (these start in
	// some 60 ms) is seen as the event stream cut off, and followed all the same.
	if !strings.Contains(p.logs.String(), "Syncthing restarted") && !strings.Contains(p.logs.String(), "events were cut off") {
		t.Errorf("no restart logged:\n%s", p.logs.String())
	}
}
