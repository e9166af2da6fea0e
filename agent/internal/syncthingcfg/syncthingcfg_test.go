package syncthingcfg

import (
	"encoding/xml"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"devtool.dev/agent/internal/config"
	"devtool.dev/agent/internal/testutil"
)

func mustIdentity(t *testing.T) Identity {
	t.Helper()
	id, err := NewIdentity()
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// instanceConfig is a contract's syncthing section for tests.
func instanceConfig(t *testing.T, self, peer Identity, folderPath string, guiPort, syncPort int) config.Syncthing {
	t.Helper()
	c, err := config.Parse([]byte(`{"version":1}`))
	if err != nil {
		t.Fatal(err)
	}
	st := c.Syncthing
	st.Certificate, st.Key, st.DeviceID = self.Certificate, self.Key, self.DeviceID
	st.APIKey, st.GUIPassword = "key-"+self.DeviceID[:7], "secret"
	st.GUIAddress = "127.0.0.1:" + strconv.Itoa(guiPort)
	st.ListenAddress = "tcp://127.0.0.1:" + strconv.Itoa(syncPort)
	st.Peer.DeviceID = peer.DeviceID
	st.Folders = []config.Folder{{ID: "work", Path: folderPath, Label: "work", Type: "sendreceive",
		RescanIntervalS: 300, FSWatcherDelayS: 1}}
	return st
}

func TestDeviceIDMatchesSyncthing(t *testing.T) {
	id := mustIdentity(t)
	home := t.TempDir()
	peer := mustIdentity(t)
	got, err := WriteHome(home, instanceConfig(t, id, peer, filepath.Join(home, "f"), 1, 2))
	if err != nil {
		t.Fatal(err)
	}
	if got != id.DeviceID {
		t.Fatalf("WriteHome returned %s, identity says %s", got, id.DeviceID)
	}
	out, err := exec.Command(testutil.SyncthingBinary(t), "serve", "--home="+home, "--device-id").CombinedOutput()
	if err != nil {
		t.Fatalf("syncthing --device-id: %v\n%s", err, out)
	}
	if strings.TrimSpace(string(out)) != id.DeviceID {
		t.Fatalf("syncthing says %q, we say %s", out, id.DeviceID)
	}
}

func TestNormalizeDeviceID(t *testing.T) {
	id := mustIdentity(t).DeviceID
	flat := strings.ToLower(strings.ReplaceAll(id, "-", ""))
	if got, err := NormalizeDeviceID(flat); err != nil || got != id {
		t.Fatalf("NormalizeDeviceID(%s) = %s, %v", flat, got, err)
	}
	bad := []byte(id)
	if bad[0] == 'A' {
		bad[0] = 'B'
	} else {
		bad[0] = 'A'
	}
	if _, err := NormalizeDeviceID(string(bad)); err == nil {
		t.Fatal("corrupted ID accepted")
	}
	if _, err := NormalizeDeviceID("ABC"); err == nil {
		t.Fatal("short ID accepted")
	}
}

func TestWriteHomeChecks(t *testing.T) {
	a, b := mustIdentity(t), mustIdentity(t)
	st := instanceConfig(t, a, b, "/tmp/x", 1, 2)
	st.Key = b.Key
	if _, err := WriteHome(t.TempDir(), st); err == nil {
		t.Fatal("key of another certificate accepted")
	}
	st = instanceConfig(t, a, b, "/tmp/x", 1, 2)
	st.DeviceID = b.DeviceID
	if _, err := WriteHome(t.TempDir(), st); err == nil {
		t.Fatal("device ID not matching the certificate accepted")
	}
	st = instanceConfig(t, a, a, "/tmp/x", 1, 2)
	if _, err := WriteHome(t.TempDir(), st); err == nil {
		t.Fatal("peer with our own ID accepted")
	}
}

func TestConfigXMLContent(t *testing.T) {
	a, b := mustIdentity(t), mustIdentity(t)
	st := instanceConfig(t, a, b, "/src/<app> & co", 8384, 22000)
	data, err := ConfigXML(st, a.DeviceID)
	if err != nil {
		t.Fatal(err)
	}
	var got xmlConfig
	if err := xml.Unmarshal(data, &got); err != nil {
		t.Fatalf("not XML: %v\n%s", err, data)
	}
	o := got.Options
	if o.GlobalAnnEnabled || o.LocalAnnEnabled || o.RelaysEnabled || o.NATEnabled || o.StartBrowser ||
		o.CrashReporting || o.AutoUpgradeIntervalH != 0 || o.URAccepted != -1 {
		t.Fatalf("something reaches outside: %+v", o)
	}
	if got.GUI.Address != "127.0.0.1:8384" || o.ListenAddresses[0] != "tcp://127.0.0.1:22000" {
		t.Fatalf("not loopback: %+v %+v", got.GUI, o.ListenAddresses)
	}
	if strings.Contains(string(data), "secret") || !strings.HasPrefix(got.GUI.Password, "$2") {
		t.Fatal("GUI password not hashed")
	}
	f := got.Folders[0]
	if f.Path != "/src/<app> & co" || !f.DisableFsync || len(f.Devices) != 2 {
		t.Fatalf("folder: %+v", f)
	}
	if got.Devices[1].Addresses[0] != "dynamic" {
		t.Fatalf("peer without addresses should be accept-only: %+v", got.Devices[1])
	}
	if f.MarkerName != "" || f.Paused {
		t.Fatalf("default marker and a running folder expected when the contract names none, got %q, paused %v", f.MarkerName, f.Paused)
	}
	st.Folders[0].MarkerName = "."
	st.Folders[0].Paused = true
	data, err = ConfigXML(st, a.DeviceID)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), "<markerName>.</markerName>") {
		t.Fatalf("markerName not written:\n%s", data)
	}
	var paused xmlConfig
	if err := xml.Unmarshal(data, &paused); err != nil || !paused.Folders[0].Paused {
		t.Fatalf("paused folder not written (%v):\n%s", err, data)
	}
}
