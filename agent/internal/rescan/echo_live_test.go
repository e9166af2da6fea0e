package rescan

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"devtool.dev/agent/internal/config"
	"devtool.dev/agent/internal/testutil"
	"devtool.dev/agent/internal/testutil/sttest"
)

// TestPulledFilesAreNotEchoed syncs files between two real Syncthing
// instances and watches the receiving folder: what Syncthing pulls there
// (new files and updates) must not come back as scan requests. It pins
// the write-temp-then-rename sequence pullEchoes relies on.
func TestPulledFilesAreNotEchoed(t *testing.T) {
	dir := t.TempDir()
	senderID, receiverID := sttest.NewIdentity(t), sttest.NewIdentity(t)
	sendDir, recvDir := filepath.Join(dir, "sender"), filepath.Join(dir, "receiver")
	senderCfg := sttest.Config(t, senderID, receiverID, sendDir)
	receiverCfg := sttest.Config(t, receiverID, senderID, recvDir)
	receiverCfg.Peer.Addresses = []string{senderCfg.ListenAddress}
	sender := sttest.Start(t, filepath.Join(dir, "sender-home"), senderCfg)
	receiver := sttest.Start(t, filepath.Join(dir, "receiver-home"), receiverCfg)
	receiver.WaitConnected(t, senderID.DeviceID)
	receiver.WaitIdle(t)

	fake := newFakeSyncthing(t, 0)
	startRescanner(t, fake, config.Folder{ID: "work", Path: recvDir})
	for i, name := range []string{"new.txt", "src/nested.go", "new.txt"} { // the last one is an update
		content := fmt.Sprintf("version %d\n", i)
		mustWrite(t, filepath.Join(sendDir, name), content)
		sender.Scan(t, name)
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
