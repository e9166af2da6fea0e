package rescan

import (
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	"devtool.dev/agent/internal/config"
	"devtool.dev/agent/internal/testutil"
)

// TestPulledFilesAreNotEchoed syncs files between two real Syncthing
// instances and watches the receiving folder: what Syncthing pulls there
// (new files and updates) must not come back as scan requests. It pins
// the write-temp-then-rename sequence pullEchoes relies on.
func TestPulledFilesAreNotEchoed(t *testing.T) {
	dir := t.TempDir()
	senderID, receiverID := newIdentity(t), newIdentity(t)
	sendDir, recvDir := filepath.Join(dir, "sender"), filepath.Join(dir, "receiver")
	senderCfg := liveConfig(t, senderID, receiverID, sendDir)
	receiverCfg := liveConfig(t, receiverID, senderID, recvDir)
	receiverCfg.Peer.Addresses = []string{senderCfg.ListenAddress}
	sender := startSyncthing(t, filepath.Join(dir, "sender-home"), senderCfg)
	receiver := startSyncthing(t, filepath.Join(dir, "receiver-home"), receiverCfg)
	testutil.Eventually(t, 30*time.Second, "peers connected", func() error {
		var conns struct {
			Connections map[string]struct{ Connected bool }
		}
		if err := receiver.get("/rest/system/connections", nil, &conns); err != nil {
			return err
		}
		if !conns.Connections[senderID.DeviceID].Connected {
			return fmt.Errorf("not connected: %+v", conns.Connections)
		}
		return nil
	})
	receiver.waitIdle(t)

	fake := newFakeSyncthing(t, 0)
	startRescanner(t, fake, config.Folder{ID: "work", Path: recvDir})
	for i, name := range []string{"new.txt", "src/nested.go", "new.txt"} { // the last one is an update
		content := fmt.Sprintf("version %d\n", i)
		mustWrite(t, filepath.Join(sendDir, name), content)
		sender.post(t, "/rest/db/scan", url.Values{"folder": {"work"}, "sub": {name}})
		testutil.Eventually(t, 30*time.Second, "sync of "+name, func() error {
			data, err := os.ReadFile(filepath.Join(recvDir, name))
			if err == nil && string(data) != content {
				err = fmt.Errorf("content %q", data)
			}
			return err
		})
	}
	fake.settle("work", recvDir)
	// src itself is reported: Syncthing creates directories in place.
	fake.neverScanned("new.txt", "src/nested.go")
}

func (a restAPI) post(t *testing.T, path string, q url.Values) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, a.base+path+"?"+q.Encode(), nil)
	req.Header.Set("X-API-Key", a.key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST %s: %s", path, resp.Status)
	}
}
