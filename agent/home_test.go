package agent

import (
	"os"
	"path/filepath"
	"testing"
)

func TestEnsureHomeReplacesAMissingHome(t *testing.T) {
	state := t.TempDir()
	t.Setenv(EnvHome, filepath.Join(state, "no-such-home"))
	home, replaced, err := ensureHome(state)
	if err != nil {
		t.Fatal(err)
	}
	if !replaced || home != filepath.Join(state, "home") || os.Getenv(EnvHome) != home {
		t.Fatalf("home %q replaced %v, HOME=%q", home, replaced, os.Getenv(EnvHome))
	}
	if info, err := os.Stat(home); err != nil || !info.IsDir() || info.Mode().Perm() != 0o700 {
		t.Fatalf("home not a 0700 directory: %v %v", info, err)
	}
}

func TestEnsureHomeReplacesAnEmptyHome(t *testing.T) {
	state := t.TempDir()
	t.Setenv(EnvHome, "")
	if _, replaced, err := ensureHome(state); err != nil || !replaced {
		t.Fatalf("replaced %v err %v", replaced, err)
	}
}

func TestEnsureHomeKeepsAWritableHome(t *testing.T) {
	mine := t.TempDir()
	t.Setenv(EnvHome, mine)
	home, replaced, err := ensureHome(t.TempDir())
	if err != nil || replaced || home != mine {
		t.Fatalf("home %q replaced %v err %v", home, replaced, err)
	}
}

func TestEnsureTmpKeepsAGivenTMPDIR(t *testing.T) {
	mine := t.TempDir()
	t.Setenv("TMPDIR", mine)
	tmp, replaced, err := ensureTmp(t.TempDir())
	if err != nil || replaced || tmp != mine {
		t.Fatalf("tmp %q replaced %v err %v", tmp, replaced, err)
	}
}

func TestEnsureTmpKeepsAWritableTmp(t *testing.T) {
	t.Setenv("TMPDIR", "")
	tmp, replaced, err := ensureTmp(t.TempDir())
	if err != nil || replaced || tmp != os.TempDir() {
		t.Fatalf("tmp %q replaced %v err %v", tmp, replaced, err)
	}
}
