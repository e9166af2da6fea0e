package untar

import (
	"errors"
	"os"
	"slices"
	"strings"

	"golang.org/x/sys/unix"
)

// DropCopied removes, of the given names in dir, those that are still
// exactly what the bootstrap wrote (m.Holds): the settling of the first
// sync passes the container's receive-only changes here, and the ones the
// bootstrap wrote are the laptop's own older content (a stale copy of a
// file the laptop changed or deleted after its listing, or Syncthing's
// conflict copy of one, renamed but the same inode). Anything else (what
// the app wrote in the container) is left alone. A directory goes only
// if it is empty once the names below it are handled (deepest first).
//
// Names are relative slash paths as Syncthing reports them; a name that
// is unusual (see cleanName), missing, or reached through a symlink is
// skipped. Returns the names removed.
func DropCopied(dir string, names []string, m *Manifest) ([]string, error) {
	root, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	rootFd := int(root.Fd())
	clean := make([]string, 0, len(names))
	for _, raw := range names {
		if name, err := cleanName(raw); err == nil && name != "" {
			clean = append(clean, name)
		}
	}
	slices.SortFunc(clean, func(a, b string) int {
		if da, db := strings.Count(a, "/"), strings.Count(b, "/"); da != db {
			return db - da
		}
		return strings.Compare(a, b)
	})
	clean = slices.Compact(clean)
	var removed []string
	for _, name := range clean {
		ok, err := dropOne(rootFd, name, m)
		if err != nil {
			return removed, &EntryError{Name: name, Err: err}
		}
		if ok {
			removed = append(removed, name)
		}
	}
	return removed, nil
}

// dropOne removes name if the manifest holds it; false (no error) when it
// is not there, not the bootstrap's, or a directory that is not empty.
func dropOne(rootFd int, name string, m *Manifest) (bool, error) {
	dir, base := splitName(name)
	pfd, err := openBelow(rootFd, dir)
	if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if pfd != rootFd {
		defer unix.Close(pfd)
	}
	var st unix.Stat_t
	err = retry(func() error { return unix.Fstatat(pfd, base, &st, unix.AT_SYMLINK_NOFOLLOW) })
	if errors.Is(err, unix.ENOENT) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if !m.Holds(&st) {
		return false, nil
	}
	flags := 0
	if kindOf(st.Mode) == KindDir {
		flags = unix.AT_REMOVEDIR
	}
	err = retry(func() error { return unix.Unlinkat(pfd, base, flags) })
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, unix.ENOENT), errors.Is(err, unix.ENOTEMPTY), errors.Is(err, unix.EEXIST):
		return false, nil
	}
	return false, err
}

// openBelow opens the directory dir ("" is the root itself) below rootFd
// one component at a time, never following a symlink.
func openBelow(rootFd int, dir string) (int, error) {
	if dir == "" {
		return rootFd, nil
	}
	fd := rootFd
	for c := range strings.SplitSeq(dir, "/") {
		next, err := openat(fd, c, dirFlags, 0)
		if fd != rootFd {
			unix.Close(fd)
		}
		if err != nil {
			return -1, err
		}
		fd = next
	}
	return fd, nil
}
