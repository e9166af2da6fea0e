package perms

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

func TestChmodNoFollow(t *testing.T) {
	for _, viaProc := range []bool{false, true} {
		name := "fchmodat2"
		if viaProc {
			name = "proc"
		}
		t.Run(name, func(t *testing.T) {
			if viaProc {
				saved := fchmodat2
				fchmodat2 = func(int, uint32) error { return unix.ENOSYS } // a kernel before 6.6
				t.Cleanup(func() { fchmodat2 = saved })
			}
			root := t.TempDir()
			outside := filepath.Join(t.TempDir(), "secret")
			file(t, outside, 0o600)
			file(t, filepath.Join(root, "src/run.sh"), 0o644)
			file(t, filepath.Join(root, "suid"), os.ModeSetuid|0o755)
			must(t, os.Symlink(outside, filepath.Join(root, "link")))
			must(t, os.Symlink(filepath.Dir(outside), filepath.Join(root, "linkdir")))
			must(t, os.Mkdir(filepath.Join(root, "shared"), 0o755))
			must(t, os.Chmod(filepath.Join(root, "shared"), os.ModeSetgid|0o775)) // setgid, as fsGroup makes volumes

			check := func(rel string, perm uint32, isDir bool, wantOld uint32, wantChanged bool, wantErr error) {
				t.Helper()
				old, changed, err := chmodNoFollow(root, rel, perm, isDir)
				if !errors.Is(err, wantErr) || (wantErr == nil && err != nil) || changed != wantChanged || (err == nil && old != wantOld) {
					t.Errorf("%s: old %04o changed %v err %v; want %04o %v %v", rel, old, changed, err, wantOld, wantChanged, wantErr)
				}
			}
			check("src/run.sh", 0o755, false, 0o644, true, nil)
			check("src/run.sh", 0o755, false, 0o755, false, nil) // already right: untouched
			check("src", 0o700, true, 0o755, true, nil)
			check("shared", 0o750, true, 0o2775, true, nil)
			check("suid", 0o755, false, 0o4755, false, nil) // bits right: setuid left alone
			check("suid", 0o700, false, 0o4755, true, nil)
			check("link", 0o777, false, 0, false, errNotThere)           // not followed
			check("linkdir/secret", 0o777, false, 0, false, errNotThere) // not traversed
			check("src", 0o755, false, 0, false, errNotThere)            // a directory where a file is expected
			check("src/run.sh", 0o755, true, 0, false, errNotThere)      // and the other way round
			check("gone", 0o755, false, 0, false, errNotThere)

			for rel, want := range map[string]os.FileMode{
				"src/run.sh": 0o755, "src": 0o700, "shared": os.ModeSetgid | 0o750, "suid": 0o700,
			} {
				if got := modeOf(t, filepath.Join(root, rel)); got != want {
					t.Errorf("%s: %v, want %v", rel, got, want)
				}
			}
			if got := modeOf(t, outside); got != 0o600 {
				t.Errorf("a symlink's target was changed: %v", got)
			}
		})
	}
}

// On this kernel, is the first way taken at all (else only the /proc
// fallback is tested)?
func TestFchmodat2OnOPathDescriptor(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	file(t, path, 0o644)
	fd, err := unix.Open(path, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	must(t, err)
	defer unix.Close(fd)
	switch err := fchmodat2(fd, 0o751); {
	case errors.Is(err, unix.ENOSYS), errors.Is(err, unix.EOPNOTSUPP):
		t.Skipf("no fchmodat2 on this kernel (%v): only the /proc way is used here", err)
	case err != nil:
		t.Fatal(err)
	}
	if got := modeOf(t, path); got != 0o751 {
		t.Fatalf("mode %v", got)
	}
}
