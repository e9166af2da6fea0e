package main

import (
	"slices"
	"testing"
)

func TestProgram(t *testing.T) {
	cases := []struct {
		argv []string
		name string
		args []string
		ok   bool
	}{
		{[]string{"/devtool/bin/devtool-agent", "supervise"}, "devtool-agent", []string{"/devtool/bin/devtool-agent", "supervise"}, true},
		{[]string{"syncthing", "--home", "h"}, "syncthing", []string{"syncthing", "--home", "h"}, true},
		{[]string{`C:\d\devtool-buildkit.EXE`, "version"}, "devtool-buildkit", []string{`C:\d\devtool-buildkit.EXE`, "version"}, true},
		{[]string{"/p/bin/devtool-host", "syncthing", "--version"}, "syncthing", []string{"/p/bin/devtool-host", "--version"}, true},
		{[]string{`C:\p\bin\devtool-host.exe`, "devtool-agent", "keygen"}, "devtool-agent", []string{`C:\p\bin\devtool-host.exe`, "keygen"}, true},
		// argv[0] wins: the agent's own commands never name a program.
		{[]string{"/x/devtool-agent", "syncthing"}, "devtool-agent", []string{"/x/devtool-agent", "syncthing"}, true},
		{[]string{"/p/bin/devtool-host"}, "", nil, false},
		{[]string{"/p/bin/devtool-host", "keygen"}, "", nil, false},
		{nil, "", nil, false},
	}
	for _, c := range cases {
		name, args, ok := program(c.argv)
		if name != c.name || ok != c.ok || !slices.Equal(args, c.args) {
			t.Errorf("program(%q) = %q %q %v, want %q %q %v", c.argv, name, args, ok, c.name, c.args, c.ok)
		}
	}
}
