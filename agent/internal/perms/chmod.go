package perms

import (
	"errors"
	"fmt"
	"strings"

	"golang.org/x/sys/unix"
)

// errNotThere: the item is gone, or is not what the entry says (another
// type, a symlink, below a symlink): nothing to change.
var errNotThere = errors.New("not there")

const dirFlags = unix.O_RDONLY | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC

// chmodNoFollow sets the permission bits of name (relative, with /) below
// root to perm, never through a symlink: each directory on the way is
// opened with O_NOFOLLOW, and the item itself as an O_PATH descriptor
// whose type is checked before its mode is changed, so an app replacing a
// file by a link at the wrong moment cannot redirect the change. A
// directory keeps its setuid, setgid and sticky bits (a volume's setgid,
// from fsGroup, makes new files belong to the pod's group); a file loses
// them, as Syncthing's own chmod does. Nothing happens when the bits are
// already right. It returns the mode found.
func chmodNoFollow(root, name string, perm uint32, isDir bool) (old uint32, changed bool, err error) {
	// Most items already have their bits (the laptop's usual 0644 and
	// 0755 are what Syncthing writes here anyway): one lstat tells, and
	// only a change takes the careful way below.
	var st unix.Stat_t
	if unix.Lstat(root+"/"+name, &st) == nil && st.Mode&0o777 == perm && kindMatches(st.Mode, isDir) {
		return st.Mode & 0o7777, false, nil
	}
	dir, err := retryEINTR(func() (int, error) { return unix.Open(root, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0) })
	if err != nil {
		return 0, false, notThere(err)
	}
	parts := strings.Split(name, "/")
	for _, c := range parts[:len(parts)-1] {
		next, err := retryEINTR(func() (int, error) { return unix.Openat(dir, c, dirFlags, 0) })
		unix.Close(dir)
		if err != nil {
			return 0, false, notThere(err)
		}
		dir = next
	}
	defer unix.Close(dir)
	fd, err := retryEINTR(func() (int, error) {
		return unix.Openat(dir, parts[len(parts)-1], unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	})
	if err != nil {
		return 0, false, notThere(err)
	}
	defer unix.Close(fd)
	if err := unix.Fstat(fd, &st); err != nil {
		return 0, false, err
	}
	if !kindMatches(st.Mode, isDir) {
		return 0, false, errNotThere // a symlink, or replaced by something else
	}
	old = st.Mode & 0o7777
	if old&0o777 == perm {
		return old, false, nil
	}
	mode := perm
	if isDir {
		mode |= old & (unix.S_ISUID | unix.S_ISGID | unix.S_ISVTX)
	}
	if err := fchmodPath(fd, mode); err != nil {
		return old, false, err
	}
	return old, true, nil
}

// kindMatches reports whether a stat mode is a directory (isDir) or a
// regular file (!isDir): never a symlink.
func kindMatches(mode uint32, isDir bool) bool {
	if isDir {
		return mode&unix.S_IFMT == unix.S_IFDIR
	}
	return mode&unix.S_IFMT == unix.S_IFREG
}

// fchmodat2 changes the mode of what an O_PATH descriptor names (Linux
// 6.6+). A variable so tests can take it away.
var fchmodat2 = func(fd int, mode uint32) error {
	return unix.Fchmodat(fd, "", mode, unix.AT_EMPTY_PATH)
}

// fchmodPath changes the mode of what fd (O_PATH, not a symlink) names.
// Without fchmodat2 (older kernels, or a seccomp profile that does not
// know it) it goes through /proc/self/fd, as glibc's fchmodat does: the
// magic link leads to the very inode fd holds.
func fchmodPath(fd int, mode uint32) error {
	err := fchmodat2(fd, mode)
	if err == nil {
		return nil
	}
	perr := unix.Chmod(fmt.Sprintf("/proc/self/fd/%d", fd), mode)
	if errors.Is(perr, unix.ENOENT) {
		return err // no /proc
	}
	return perr
}

// notThere turns "gone" and "a symlink or not a directory on the way"
// into errNotThere.
func notThere(err error) error {
	if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR) {
		return errNotThere
	}
	return err
}

func retryEINTR(f func() (int, error)) (int, error) {
	for {
		fd, err := f()
		if err != unix.EINTR {
			return fd, err
		}
	}
}
