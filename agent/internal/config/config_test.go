package config

import (
	"strings"
	"testing"
)

func TestParseDefaultsAndValidation(t *testing.T) {
	c, err := Parse([]byte(`{"version":1,"ssh":{"hostKey":"k","authorizedKeys":["a"]},
		"syncthing":{"certificate":"c","key":"k","apiKey":"a","guiPassword":"p","peer":{"deviceID":"X"},
		"folders":[{"id":"app","path":"/src/app"}]}}`))
	if err != nil {
		t.Fatal(err)
	}
	if c.SSH.ListenAddress != DefaultSSHListen || c.Syncthing.GUIAddress != DefaultGUIAddress ||
		c.Syncthing.ListenAddress != DefaultSyncListen || c.Syncthing.GUIUser != DefaultGUIUser {
		t.Fatalf("defaults not applied: %+v", c)
	}
	f := c.Syncthing.Folders[0]
	if f.Type != "sendreceive" || f.Label != "app" || f.FSWatcherDelayS != 1 || f.RescanIntervalS != 300 {
		t.Fatalf("folder defaults: %+v", f)
	}
	if err := c.ValidateSSH(); err != nil {
		t.Fatal(err)
	}
	if err := c.ValidateSyncthing(); err != nil {
		t.Fatal(err)
	}
	t.Setenv(EnvState, "")
	if c.StateDirectory() != DefaultStateDir {
		t.Fatal(c.StateDirectory())
	}
	t.Setenv(EnvState, "/state")
	if c.StateDirectory() != "/state" {
		t.Fatal(c.StateDirectory())
	}
}

func TestParseRejects(t *testing.T) {
	for name, doc := range map[string]string{
		"future version": `{"version":2}`,
		"unknown field":  `{"version":1,"ssh":{"hostKeyFile":"typo"}}`,
		"not json":       `{`,
	} {
		if _, err := Parse([]byte(doc)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	c, _ := Parse([]byte(`{"version":1,"syncthing":{"folders":[{"id":"a","path":"rel"},{"id":"a","path":"/x","type":"both"}]}}`))
	err := c.ValidateSyncthing()
	for _, want := range []string{"certificate", "apiKey", "peer.deviceID", "not absolute", "used twice", `"both"`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("want an error mentioning %s, got %v", want, err)
		}
	}
	if err := c.ValidateSSH(); err == nil {
		t.Error("no authorized keys accepted")
	}
}
