// Package atomicfile replaces files in one rename, so a reader never sees
// a half-written one: not Syncthing reading its config after a crash, not
// the dev container running a binary an interrupted init container was
// still copying.
package atomicfile

import (
	"io"
	"os"
	"path/filepath"
)

// Write copies r into path through a temporary sibling, fsynced, with
// mode, then renames it over path.
func Write(path string, r io.Reader, mode os.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // no-op after the rename
	if _, err := io.Copy(tmp, r); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
