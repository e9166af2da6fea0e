package untar

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// copied extracts a small tree recording a manifest, as the bootstrap does.
func copied(t *testing.T) (string, *Manifest) {
	t.Helper()
	dst := t.TempDir()
	m := NewManifest()
	_, err := ExtractRecording(dst, bytesOf(t,
		dir("src", 0o755, t0),
		file("src/a.txt", 0o644, "laptop a", t0),
		file("src/b.txt", 0o644, "laptop b", t0),
		file("src/c.txt", 0o644, "laptop c", t0),
		dir("gone", 0o755, t0),
		file("gone/x", 0o644, "x", t0),
		file("gone/y", 0o644, "y", t0),
		dir("kept", 0o755, t0),
		file("kept/z", 0o644, "z", t0),
		link("src/l", "a.txt", t0),
	), m)
	if err != nil {
		t.Fatal(err)
	}
	// 3 files in src + 3 more, 3 dirs, 1 symlink.
	if m.Len() != 10 {
		t.Fatalf("manifest has %d entries, want 10", m.Len())
	}
	return dst, m
}

func TestDropCopiedRemovesOnlyWhatTheBootstrapWrote(t *testing.T) {
	dst, m := copied(t)
	p := func(n string) string { return filepath.Join(dst, n) }
	// Syncthing's conflict copy of a stale file: a rename, same inode.
	conflict := "src/a.sync-conflict-20260101-000000-ABCDEFG.txt"
	if err := os.Rename(p("src/a.txt"), p(conflict)); err != nil {
		t.Fatal(err)
	}
	// The app rewrote b.txt in place (same inode, new mtime) and wrote c.txt anew (new inode,
	// same content and mtime as the copy).
	if err := os.WriteFile(p("src/b.txt"), []byte("app b"), 0o644); err != nil {
		t.Fatal(err)
	}
	// (Written next to it first, so it cannot get the freed inode number.)
	os.WriteFile(p("src/c.txt.tmp"), []byte("laptop c"), 0o644)
	os.Chtimes(p("src/c.txt.tmp"), t0, t0)
	os.Rename(p("src/c.txt.tmp"), p("src/c.txt"))
	// The app added a file under kept/: the directory stays even if listed.
	os.WriteFile(p("kept/new"), []byte("app"), 0o644)

	names := []string{conflict, "src/b.txt", "src/c.txt", "gone", "gone/x", "gone/y", "kept", "kept/z", "src/l", "missing", "../etc/passwd", "/abs", ".stfolder"}
	removed, err := DropCopied(dst, names, m)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"gone/x", "gone/y", "kept/z", conflict, "src/l", "gone"}
	if !slices.Equal(removed, want) {
		t.Fatalf("removed %q, want %q", removed, want)
	}
	for _, n := range []string{"src/b.txt", "src/c.txt", "kept", "kept/new"} {
		if _, err := os.Lstat(p(n)); err != nil {
			t.Errorf("%s: %v (must be kept)", n, err)
		}
	}
	for _, n := range []string{conflict, "gone", "src/l"} {
		if _, err := os.Lstat(p(n)); !os.IsNotExist(err) {
			t.Errorf("%s still there", n)
		}
	}
}

func TestDropCopiedNeverFollowsSymlinks(t *testing.T) {
	dst, m := copied(t)
	// A directory replaced by a symlink to another one holding the bootstrap's file: the name
	// through the symlink is not the copy's, nothing is removed.
	os.Rename(filepath.Join(dst, "gone"), filepath.Join(dst, "elsewhere"))
	os.Symlink("elsewhere", filepath.Join(dst, "gone"))
	removed, err := DropCopied(dst, []string{"gone/x"}, m)
	if err != nil || len(removed) != 0 {
		t.Fatalf("removed %q, err %v", removed, err)
	}
	if _, err := os.Lstat(filepath.Join(dst, "elsewhere/x")); err != nil {
		t.Fatal(err)
	}
}

func TestManifestSaveLoad(t *testing.T) {
	dst, m := copied(t)
	path := ManifestPath(t.TempDir(), dst)
	if err := m.Save(path); err != nil {
		t.Fatal(err)
	}
	back, err := LoadManifest(path)
	if err != nil {
		t.Fatal(err)
	}
	if back.Len() != m.Len() {
		t.Fatalf("loaded %d entries, saved %d", back.Len(), m.Len())
	}
	// The loaded manifest still knows the copy, and not a touched file.
	os.Chtimes(filepath.Join(dst, "src/b.txt"), t0, t0.Add(time.Nanosecond))
	removed, err := DropCopied(dst, []string{"src/a.txt", "src/b.txt"}, back)
	if err != nil || !slices.Equal(removed, []string{"src/a.txt"}) {
		t.Fatalf("removed %q, err %v", removed, err)
	}
	os.WriteFile(path, []byte("f 1 2 x 4\n"), 0o600)
	if _, err := LoadManifest(path); err == nil {
		t.Fatal("a bad manifest line was accepted")
	}
	if ManifestPath("/s", "/app") == ManifestPath("/s", "/app2") || ManifestPath("/s", "/app/") != ManifestPath("/s", "/app") {
		t.Fatal("manifest paths must be one per folder")
	}
}

func bytesOf(t *testing.T, entries ...entry) *bytes.Reader {
	t.Helper()
	return bytes.NewReader(archive(t, entries...))
}
