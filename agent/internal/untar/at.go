package untar

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// Everything below works relative to directory file descriptors that were
// opened with O_NOFOLLOW, one component at a time, so no symlink is ever
// used as a path component: not one from the archive, not one that
// appeared in the folder by any other means.

const dirFlags = unix.O_RDONLY | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC

// implicitDirMode is for a parent directory the archive has no entry for
// (GNU tar and Node's tar-stream always write one first; other tools may
// not).
const implicitDirMode = 0o755

// parent returns a descriptor of name's parent directory and name's last
// component. The descriptor belongs to the extractor's cache: callers do
// not close it. Entries of one directory usually follow each other, so
// the last parent is kept open and the walk repeated only when it changes.
func (e *extractor) parent(name string) (int, string, error) {
	dir, base := splitName(name)
	if dir == "" {
		return e.rootFd, base, nil
	}
	if e.cacheFd >= 0 && e.cacheName == dir {
		return e.cacheFd, base, nil
	}
	e.dropCache()
	fd := e.rootFd
	walked := ""
	for c := range strings.SplitSeq(dir, "/") {
		if walked == "" {
			walked = c
		} else {
			walked += "/" + c
		}
		next, err := e.openOrMakeDir(fd, c, walked)
		if fd != e.rootFd {
			unix.Close(fd)
		}
		if err != nil {
			return -1, "", err
		}
		fd = next
	}
	e.cacheName, e.cacheFd = dir, fd
	return fd, base, nil
}

// record adds name (in dirfd), as it is now, to the manifest if one is kept.
func (e *extractor) record(dirfd int, name string) error {
	if e.manifest == nil {
		return nil
	}
	return e.manifest.record(dirfd, name)
}

func (e *extractor) dropCache() {
	if e.cacheFd >= 0 {
		unix.Close(e.cacheFd)
	}
	e.cacheName, e.cacheFd = "", -1
}

// openOrMakeDir opens the directory c in fd without following a symlink,
// creating it if it is missing (walked is its name, for the record).
func (e *extractor) openOrMakeDir(fd int, c, walked string) (int, error) {
	next, err := openat(fd, c, dirFlags, 0)
	if errors.Is(err, unix.ENOENT) {
		if err = mkdirat(fd, c, implicitDirMode); err == nil {
			e.dirs[walked] = &dirEntry{}
			e.stats.Dirs++
			if err := e.record(fd, c); err != nil {
				return -1, err
			}
		} else if !errors.Is(err, unix.EEXIST) {
			return -1, fmt.Errorf("create directory %s: %w", walked, err)
		}
		next, err = openat(fd, c, dirFlags, 0)
	}
	if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR) {
		return -1, fmt.Errorf("%s is a symlink or not a directory", walked)
	}
	if err != nil {
		return -1, fmt.Errorf("open directory %s: %w", walked, err)
	}
	return next, nil
}

// setMtime sets name's modification time (not following a symlink); the
// access time is left alone.
func setMtime(dirfd int, name string, mtime time.Time) error {
	ts := []unix.Timespec{{Nsec: unix.UTIME_OMIT}, unix.NsecToTimespec(mtime.UnixNano())}
	return retry(func() error { return unix.UtimesNanoAt(dirfd, name, ts, unix.AT_SYMLINK_NOFOLLOW) })
}

// The system calls below are retried on EINTR, as package os does: on
// network file systems (a PVC may be NFS) they can be interrupted by the
// Go runtime's own preemption signals.

func retry(f func() error) error {
	for {
		if err := f(); err != unix.EINTR {
			return err
		}
	}
}

func openat(dirfd int, name string, flags int, mode uint32) (int, error) {
	for {
		fd, err := unix.Openat(dirfd, name, flags, mode)
		if err != unix.EINTR {
			return fd, err
		}
	}
}

func mkdirat(dirfd int, name string, mode uint32) error {
	return retry(func() error { return unix.Mkdirat(dirfd, name, mode) })
}

func symlinkat(target string, dirfd int, name string) error {
	return retry(func() error { return unix.Symlinkat(target, dirfd, name) })
}

func fchmod(fd int, mode uint32) error {
	return retry(func() error { return unix.Fchmod(fd, mode) })
}

// fdWriter writes to a file descriptor. Unlike *os.File it has no
// ReadFrom, so io.CopyBuffer really uses the extractor's one buffer
// instead of allocating its own per file.
type fdWriter int

func (w fdWriter) Write(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		m, err := unix.Write(int(w), p[n:])
		switch {
		case err == unix.EINTR:
			continue
		case err != nil:
			return n, err
		case m == 0:
			return n, io.ErrShortWrite
		}
		n += m
	}
	return n, nil
}
