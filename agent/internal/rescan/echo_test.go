package rescan

import (
	"strings"
	"testing"
)

func TestSyncthingTempName(t *testing.T) {
	if got := syncthingTempName("main.go"); got != ".syncthing.main.go.tmp" {
		t.Fatalf("short name: %q", got)
	}
	// Long names are hashed (sha256, hex) to stay within name limits.
	long := strings.Repeat("x", 146)
	got := syncthingTempName(long)
	if !strings.HasPrefix(got, ".syncthing.") || !strings.HasSuffix(got, ".tmp") || len(got) != len(".syncthing.")+64+len(".tmp") {
		t.Fatalf("long name: %q", got)
	}
	if got := syncthingTempName(long[:145]); got != ".syncthing."+long[:145]+".tmp" {
		t.Fatalf("145 bytes is not hashed by Syncthing: %q", got)
	}
}

func TestPullEchoes(t *testing.T) {
	p := newPullEchoes()
	if p.landing("src/a.go") {
		t.Fatal("a create without a temp rename counted as a pull")
	}
	p.tempMoved("src/.syncthing.a.go.tmp")
	if p.landing("b.go") || p.landing("other/a.go") {
		t.Fatal("a temp rename matched another file")
	}
	if !p.landing("src/a.go") {
		t.Fatal("temp rename + create not recognised as a pull")
	}
	if !p.pullChtimes("src/a.go", true) {
		t.Fatal("the mtime set after the rename not recognised")
	}
	if p.pullChtimes("src/a.go", true) {
		t.Fatal("a second attribute change (the user's chmod) swallowed")
	}
	p.tempMoved("src/.syncthing.a.go.tmp")
	p.landing("src/a.go")
	if p.pullChtimes("src/a.go", false) || p.pullChtimes("src/a.go", true) {
		t.Fatal("a write after the pull did not end the expectation")
	}
}
