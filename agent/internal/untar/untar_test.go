package untar

import (
	"archive/tar"
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// entry is one archive entry for a test stream.
type entry struct {
	hdr  tar.Header
	body string
}

var t0 = time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC)

func file(name string, mode int64, body string, mtime time.Time) entry {
	return entry{tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: mode, Size: int64(len(body)), ModTime: mtime}, body}
}

func dir(name string, mode int64, mtime time.Time) entry {
	return entry{hdr: tar.Header{Typeflag: tar.TypeDir, Name: name, Mode: mode, ModTime: mtime}}
}

func link(name, target string, mtime time.Time) entry {
	return entry{hdr: tar.Header{Typeflag: tar.TypeSymlink, Name: name, Linkname: target, Mode: 0o777, ModTime: mtime}}
}

func archive(t *testing.T, entries ...entry) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := tar.NewWriter(&buf)
	for _, e := range entries {
		if err := w.WriteHeader(&e.hdr); err != nil {
			t.Fatal(err)
		}
		if _, err := io.WriteString(w, e.body); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func extract(t *testing.T, dst string, entries ...entry) (Stats, error) {
	t.Helper()
	return Extract(dst, bytes.NewReader(archive(t, entries...)))
}

func checkEntry(t *testing.T, path string, mode os.FileMode, mtime time.Time) {
	t.Helper()
	info, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode() != mode {
		t.Errorf("%s: mode %v, want %v", path, info.Mode(), mode)
	}
	if !info.ModTime().Equal(mtime) {
		t.Errorf("%s: mtime %v, want %v", path, info.ModTime(), mtime)
	}
}

func TestExtract(t *testing.T) {
	dst := t.TempDir()
	t.Cleanup(func() { // so that t.TempDir can remove them
		os.Chmod(filepath.Join(dst, "ro"), 0o755)
		os.Chmod(filepath.Join(dst, "ro/locked"), 0o755)
	})
	nanos := t0.Add(123456789 * time.Nanosecond)
	pax := file("./src/precise.txt", 0o644, "pax", nanos)
	pax.hdr.Format = tar.FormatPAX
	long := strings.Repeat("long-name-", 20) // > 100 bytes: a PAX or GNU long name
	st, err := extract(t, dst,
		dir("./", 0o777, t0), // GNU tar's root entry: skipped, the folder is not changed
		dir("./src/", 0o750, t0.Add(1*time.Hour)),
		file("./src/main.go", 0o640, "package main\n", t0.Add(2*time.Hour)),
		file("src/run.sh", 0o4755, "#!/bin/sh\n", t0.Add(3*time.Hour)), // setuid dropped
		pax,
		dir("ro", 0o555, t0.Add(4*time.Hour)),
		file("ro/inside", 0o444, "read-only", t0.Add(5*time.Hour)),
		dir("ro/locked", 0o500, t0.Add(5*time.Hour)),
		file("ro/locked/f", 0o400, "", t0.Add(5*time.Hour)),
		file("implicit/sub/f", 0o600, "", t0.Add(6*time.Hour)),
		file(long, 0o644, "x", t0),
		link("src/link", "main.go", t0.Add(7*time.Hour)),
		link("abs", "/tmp/elsewhere", t0.Add(8*time.Hour)),
		dir("src/deep/", 0o700, t0.Add(9*time.Hour)),
		link("src/deep/up", "../..", t0.Add(10*time.Hour)),
	)
	if err != nil {
		t.Fatal(err)
	}
	want := Stats{Files: 7, Dirs: 6, Symlinks: 3, Bytes: int64(len("package main\n#!/bin/sh\npaxread-onlyx")), Skipped: 0}
	if st != want {
		t.Errorf("stats %+v, want %+v", st, want)
	}
	p := func(name string) string { return filepath.Join(dst, name) }
	checkEntry(t, p("src"), os.ModeDir|0o750, t0.Add(1*time.Hour))
	checkEntry(t, p("src/main.go"), 0o640, t0.Add(2*time.Hour))
	checkEntry(t, p("src/run.sh"), 0o755, t0.Add(3*time.Hour))
	checkEntry(t, p("src/precise.txt"), 0o644, nanos)
	checkEntry(t, p("ro"), os.ModeDir|0o555, t0.Add(4*time.Hour))
	checkEntry(t, p("ro/inside"), 0o444, t0.Add(5*time.Hour))
	checkEntry(t, p("ro/locked"), os.ModeDir|0o500, t0.Add(5*time.Hour))
	checkEntry(t, p("ro/locked/f"), 0o400, t0.Add(5*time.Hour))
	checkEntry(t, p("src/link"), os.ModeSymlink|0o777, t0.Add(7*time.Hour))
	checkEntry(t, p("abs"), os.ModeSymlink|0o777, t0.Add(8*time.Hour))
	checkEntry(t, p("src/deep"), os.ModeDir|0o700, t0.Add(9*time.Hour))
	checkEntry(t, p("src/deep/up"), os.ModeSymlink|0o777, t0.Add(10*time.Hour))
	if target, _ := os.Readlink(p("abs")); target != "/tmp/elsewhere" {
		t.Errorf("abs -> %q", target)
	}
	if data, _ := os.ReadFile(p("src/link")); string(data) != "package main\n" {
		t.Errorf("src/link reads %q", data)
	}
	if data, _ := os.ReadFile(p(long)); string(data) != "x" {
		t.Errorf("long name reads %q", data)
	}
	if info, err := os.Stat(p("implicit/sub")); err != nil || !info.IsDir() {
		t.Errorf("implicit parent: %v", err)
	}
	// The folder itself keeps its own mode ("./" said 0777).
	if info, _ := os.Stat(dst); info.Mode().Perm() == 0o777 {
		t.Error("root entry applied to the folder")
	}
}

func TestDirectoryMtimesSurviveChildren(t *testing.T) {
	dst := t.TempDir()
	// Children (files, a subdirectory, and symlinks, which are created at
	// the very end) all come after their directory's entry.
	_, err := extract(t, dst,
		dir("a", 0o755, t0),
		dir("a/b", 0o755, t0.Add(time.Minute)),
		dir("a/b/c", 0o755, t0.Add(2*time.Minute)),
		file("a/b/c/f", 0o644, "f", t0),
		link("a/b/c/l", "f", t0),
		link("a/l", "b", t0),
		file("a/g", 0o644, "g", t0),
	)
	if err != nil {
		t.Fatal(err)
	}
	checkEntry(t, filepath.Join(dst, "a"), os.ModeDir|0o755, t0)
	checkEntry(t, filepath.Join(dst, "a/b"), os.ModeDir|0o755, t0.Add(time.Minute))
	checkEntry(t, filepath.Join(dst, "a/b/c"), os.ModeDir|0o755, t0.Add(2*time.Minute))
}

// unreadable fails the test if it is read: the emptiness check comes first.
type unreadable struct{ t *testing.T }

func (u unreadable) Read([]byte) (int, error) {
	u.t.Error("stdin read although the folder is not empty")
	return 0, io.EOF
}

func TestRefusesNonEmptyFolder(t *testing.T) {
	dst := t.TempDir()
	os.WriteFile(filepath.Join(dst, "README"), nil, 0o644)
	_, err := Extract(dst, unreadable{t})
	if !errors.Is(err, ErrNotEmpty) || !strings.Contains(err.Error(), "(README)") {
		t.Fatalf("want ErrNotEmpty naming README, got %v", err)
	}
	if _, err := Extract(filepath.Join(dst, "README"), unreadable{t}); err == nil || errors.Is(err, ErrNotEmpty) {
		t.Fatalf("a file as the folder: %v", err)
	}

	// Syncthing's marker (a directory, or a file) and .stignore are fine.
	dst = t.TempDir()
	os.Mkdir(filepath.Join(dst, ".stfolder"), 0o755)
	os.WriteFile(filepath.Join(dst, ".stignore"), []byte("node_modules\n"), 0o644)
	if _, err := extract(t, dst, file("a", 0o644, "a", t0)); err != nil {
		t.Fatal(err)
	}
	dst = t.TempDir()
	os.WriteFile(filepath.Join(dst, ".stfolder"), nil, 0o644)
	if _, err := extract(t, dst, file("a", 0o644, "a", t0)); err != nil {
		t.Fatal(err)
	}
}

func TestRejectsBadNames(t *testing.T) {
	for _, name := range []string{"../x", "/abs", "a/../../x", "a/..", "", "a//b", ".stfolder/x", ".stignore", ".stversions/old", "./.stfolder"} {
		t.Run(name, func(t *testing.T) {
			parent := t.TempDir()
			dst := filepath.Join(parent, "dst")
			os.Mkdir(dst, 0o755)
			os.Mkdir(filepath.Join(dst, ".stfolder"), 0o755)
			_, err := extract(t, dst, file(name, 0o644, "evil", t0))
			var ee *EntryError
			if !errors.As(err, &ee) || ee.Name != name {
				t.Fatalf("want an EntryError for %q, got %v", name, err)
			}
			if name != "" && !strings.HasSuffix(err.Error(), "("+name+")") {
				t.Errorf("message %q does not end with the entry name", err)
			}
			var written []string
			filepath.Walk(parent, func(p string, info os.FileInfo, err error) error {
				if err == nil && !info.IsDir() {
					written = append(written, p)
				}
				return nil
			})
			if len(written) > 0 {
				t.Fatalf("written: %v", written)
			}
		})
	}
}

func TestNeverWritesThroughSymlinks(t *testing.T) {
	for name, entries := range map[string][]entry{
		"link outside, file below": {link("link", "OUTSIDE", t0), file("link/file", 0o644, "evil", t0)},
		"link outside, dir below":  {link("link", "OUTSIDE", t0), dir("link/d", 0o755, t0)},
		"link outside, same name":  {link("link", "OUTSIDE/file", t0), file("link", 0o644, "evil", t0)},
		"link to .., file below":   {link("link", "..", t0), file("link/file", 0o644, "evil", t0)},
		"link to a dir inside":     {dir("real", 0o755, t0), link("link", "real", t0), file("link/file", 0o644, "evil", t0)},
		"link below a link":        {dir("real", 0o755, t0), link("link", "real", t0), link("link/l2", "OUTSIDE", t0)},
		"file first, then link":    {file("link/file", 0o644, "ok", t0), link("link", "OUTSIDE", t0)},
	} {
		t.Run(name, func(t *testing.T) {
			outside := t.TempDir()
			dst := t.TempDir()
			for i := range entries {
				entries[i].hdr.Linkname = strings.Replace(entries[i].hdr.Linkname, "OUTSIDE", outside, 1)
			}
			if _, err := extract(t, dst, entries...); err == nil {
				t.Fatal("extracted")
			}
			if names, _ := os.ReadDir(outside); len(names) > 0 {
				t.Fatalf("written outside: %v", names)
			}
			if _, err := os.Stat(filepath.Join(dst, "real", "file")); err == nil {
				t.Fatal("written through a symlink to a directory inside")
			}
			if _, err := os.Stat(filepath.Join(filepath.Dir(dst), "file")); err == nil {
				t.Fatal("written through a symlink to ..")
			}
		})
	}
}

// TestWalkRefusesSymlinks checks the O_NOFOLLOW walk itself, with
// symlinks that are already in the folder (not from the archive).
func TestWalkRefusesSymlinks(t *testing.T) {
	outside, dst := t.TempDir(), t.TempDir()
	os.Symlink(outside, filepath.Join(dst, "dirlink"))
	os.Symlink(filepath.Join(outside, "f"), filepath.Join(dst, "filelink"))
	root, err := os.Open(dst)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	e := newExtractor(int(root.Fd()))
	defer e.dropCache()
	for _, name := range []string{"dirlink/f", "dirlink/sub/f", "filelink"} {
		if err := e.writeFile(name, 0o644, t0, strings.NewReader("evil")); err == nil {
			t.Errorf("%s: written", name)
		}
	}
	if err := e.makeDir("dirlink/d", 0o755, t0); err == nil {
		t.Error("dirlink/d: made")
	}
	if err := e.makeSymlink(symlink{"dirlink/l", "x", t0}); err == nil {
		t.Error("dirlink/l: made")
	}
	if names, _ := os.ReadDir(outside); len(names) > 0 {
		t.Fatalf("written outside: %v", names)
	}
}

func TestDuplicateFileIsNotOverwritten(t *testing.T) {
	dst := t.TempDir()
	_, err := extract(t, dst, file("a", 0o644, "first", t0), file("a", 0o644, "second", t0))
	if err == nil || !strings.Contains(err.Error(), "exists") {
		t.Fatalf("duplicate accepted: %v", err)
	}
	if data, _ := os.ReadFile(filepath.Join(dst, "a")); string(data) != "first" {
		t.Fatalf("overwritten: %q", data)
	}
	dst = t.TempDir()
	if _, err := extract(t, dst, dir("d", 0o755, t0), file("d", 0o644, "x", t0)); err == nil {
		t.Fatal("file over a directory accepted")
	}
	dst = t.TempDir()
	if _, err := extract(t, dst, file("f", 0o644, "x", t0), dir("f", 0o755, t0)); err == nil {
		t.Fatal("directory over a file accepted")
	}
	// A directory entry after an entry below it (its parent made then) is fine.
	dst = t.TempDir()
	if _, err := extract(t, dst, file("d/f", 0o644, "x", t0), dir("d", 0o711, t0)); err != nil {
		t.Fatal(err)
	}
	checkEntry(t, filepath.Join(dst, "d"), os.ModeDir|0o711, t0)
}

func TestOtherTypesSkipped(t *testing.T) {
	dst := t.TempDir()
	st, err := extract(t, dst,
		file("a", 0o644, "a", t0),
		entry{hdr: tar.Header{Typeflag: tar.TypeLink, Name: "hard", Linkname: "a", ModTime: t0}},
		entry{hdr: tar.Header{Typeflag: tar.TypeFifo, Name: "fifo", Mode: 0o644, ModTime: t0}},
		entry{hdr: tar.Header{Typeflag: tar.TypeChar, Name: "null", Mode: 0o666, Devmajor: 1, Devminor: 3, ModTime: t0}},
	)
	if err != nil {
		t.Fatal(err)
	}
	if st.Skipped != 3 || st.Files != 1 {
		t.Fatalf("stats %+v", st)
	}
	for _, name := range []string{"hard", "fifo", "null"} {
		if _, err := os.Lstat(filepath.Join(dst, name)); err == nil {
			t.Errorf("%s created", name)
		}
	}
}

func TestTruncatedArchiveFails(t *testing.T) {
	data := archive(t, file("a", 0o644, strings.Repeat("a", 1000), t0), file("b", 0o644, "b", t0))
	// Without the end-of-archive blocks (a sender that died between
	// entries), in the middle of a file's data, and empty.
	for name, cut := range map[string][]byte{
		"no end blocks": data[:len(data)-1024],
		"mid data":      data[:1000],
		"empty":         nil,
	} {
		dst := t.TempDir()
		if _, err := Extract(dst, bytes.NewReader(cut)); err == nil {
			t.Errorf("%s: accepted", name)
		}
		// The file cut off in the middle is removed: it must not pass for the container's own.
		if _, err := os.Lstat(filepath.Join(dst, "a")); name == "mid data" && err == nil {
			t.Errorf("%s: the cut-off file stayed", name)
		}
	}
}
