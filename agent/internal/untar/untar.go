// Package untar extracts the tar stream the CLI sends once to pre-fill a
// dev container's new, empty synced folder (`devtool-agent untar DIR`):
// much faster than letting Syncthing transfer every file on its own.
//
// Safety comes first, since a wrong extraction would write into the
// user's volume where nobody looks: the folder must be empty, nothing is
// ever replaced or written through (files are created O_EXCL|O_NOFOLLOW),
// names cannot leave the folder or touch Syncthing's own files, and no
// symlink is ever followed: symlink entries are created only after every
// other entry, and every path is resolved one component at a time with
// O_NOFOLLOW (at.go).
//
// On an error extraction stops; the file being written is removed, what
// was complete stays: the caller
// reports the failure and Syncthing then syncs the folder as usual,
// finishing or correcting the half-done bootstrap.
package untar

import (
	"archive/tar"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// Stats counts what Extract created. Dirs includes parent directories the
// archive had no entry for; Skipped counts entries of other types (hard
// links, devices, fifos), which are not extracted.
type Stats struct {
	Files    int   `json:"files"`
	Dirs     int   `json:"dirs"`
	Symlinks int   `json:"symlinks"`
	Bytes    int64 `json:"bytes"`
	Skipped  int   `json:"skipped"`
}

// ErrNotEmpty means the folder holds something besides Syncthing's marker
// and .stignore; nothing was read or written. The caller then skips the
// bootstrap and lets Syncthing sync.
var ErrNotEmpty = errors.New("not empty")

// EntryError is a failure at one archive entry.
type EntryError struct {
	Name string // the entry's name as in the archive
	Err  error
}

func (e *EntryError) Error() string {
	if e.Name == "" {
		return e.Err.Error()
	}
	return fmt.Sprintf("%v (%s)", e.Err, e.Name)
}

func (e *EntryError) Unwrap() error { return e.Err }

// copyBufferSize: one buffer for all file contents.
const copyBufferSize = 1 << 20

type extractor struct {
	rootFd    int
	cacheName string // the parent directory kept open (at.go)
	cacheFd   int
	buf       []byte
	stats     Stats
	// dirs are the directories created so far, by name.
	dirs map[string]*dirEntry
	// symlinks are the symlink entries seen so far, created at the end.
	symlinks    []symlink
	symlinkName map[string]bool
	// manifest, when not nil, records every entry created (manifest.go).
	manifest *Manifest
}

type dirEntry struct {
	explicit bool // the archive has an entry for it
	mode     uint32
	mtime    time.Time
}

type symlink struct {
	name, target string
	mtime        time.Time
}

// Extract extracts the tar stream r into dir, which must be an empty
// directory (see ErrNotEmpty); it checks that before reading r at all.
// Regular files, directories and symlinks are created with their
// permission bits (no setuid, setgid or sticky) and modification times;
// ownership is the caller's.
func Extract(dir string, r io.Reader) (Stats, error) {
	return ExtractRecording(dir, r, nil)
}

// ExtractRecording is Extract that also records in m the identity of
// every entry it creates (nil: none).
func ExtractRecording(dir string, r io.Reader, m *Manifest) (Stats, error) {
	root, err := openEmptyDir(dir)
	if err != nil {
		return Stats{}, err
	}
	defer root.Close()
	e := newExtractor(int(root.Fd()))
	e.manifest = m
	defer e.dropCache()
	if err := e.extract(r); err != nil {
		return e.stats, err
	}
	return e.stats, nil
}

func newExtractor(rootFd int) *extractor {
	return &extractor{
		rootFd:      rootFd,
		cacheFd:     -1,
		buf:         make([]byte, copyBufferSize),
		dirs:        map[string]*dirEntry{},
		symlinkName: map[string]bool{},
	}
}

func openEmptyDir(dir string) (*os.File, error) {
	root, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	info, err := root.Stat()
	if err == nil && !info.IsDir() {
		err = fmt.Errorf("%s is not a directory", dir)
	}
	if err != nil {
		root.Close()
		return nil, err
	}
	names, err := root.Readdirnames(-1)
	if err != nil {
		root.Close()
		return nil, err
	}
	var found []string
	for _, n := range names {
		if !mayExist[n] {
			found = append(found, n)
		}
	}
	if len(found) > 0 {
		root.Close()
		slices.Sort(found)
		if len(found) > 5 {
			found = append(found[:5], fmt.Sprintf("and %d more", len(found)-5))
		}
		return nil, fmt.Errorf("%s is %w (%s)", dir, ErrNotEmpty, strings.Join(found, ", "))
	}
	return root, nil
}

func (e *extractor) extract(r io.Reader) error {
	eof := &eofReader{r: r}
	tr := tar.NewReader(eof)
	last := ""
	for {
		hdr, err := tr.Next()
		if err == io.EOF && eof.hit {
			// archive/tar takes a stream that stops between entries for a
			// complete archive; a sender that died must not look like one.
			err = errors.New("stream ends without the end-of-archive blocks")
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return &EntryError{Name: after(last), Err: fmt.Errorf("read archive: %w", err)}
		}
		last = hdr.Name
		if err := e.entry(hdr, tr); err != nil {
			return &EntryError{Name: hdr.Name, Err: err}
		}
	}
	// Only now that nothing else will be written can symlinks exist.
	for _, s := range e.symlinks {
		if err := e.makeSymlink(s); err != nil {
			return &EntryError{Name: s.name, Err: err}
		}
	}
	return e.finishDirs()
}

func after(name string) string {
	if name == "" {
		return ""
	}
	return "after " + name
}

func (e *extractor) entry(hdr *tar.Header, data io.Reader) error {
	if hdr.Typeflag == tar.TypeXGlobalHeader {
		return nil // PAX records for the whole archive (git archive's commit ID): nothing to extract
	}
	name, err := cleanName(hdr.Name)
	if err != nil {
		return err
	}
	if name == "" {
		if hdr.Typeflag != tar.TypeDir {
			return errors.New("empty name")
		}
		return nil // "./": the folder itself, which is not ours to change
	}
	perm := uint32(hdr.Mode) & 0o777
	switch hdr.Typeflag {
	case tar.TypeDir, tar.TypeReg, tar.TypeGNUSparse, tar.TypeSymlink:
		if s := e.symlinkAt(name); s != "" {
			return fmt.Errorf("path goes through the symlink entry %s", s)
		}
	}
	switch hdr.Typeflag {
	case tar.TypeDir:
		return e.makeDir(name, perm, hdr.ModTime)
	case tar.TypeReg, tar.TypeGNUSparse: // archive/tar expands sparse files
		return e.writeFile(name, perm, hdr.ModTime, data)
	case tar.TypeSymlink:
		if hdr.Linkname == "" {
			return errors.New("symlink without a target")
		}
		e.symlinks = append(e.symlinks, symlink{name, hdr.Linkname, hdr.ModTime})
		e.symlinkName[name] = true
	default:
		e.stats.Skipped++
	}
	return nil
}

// symlinkAt returns the symlink entry that name is, or lies below, if any.
// Such an entry would be refused at the end anyway (its name exists
// then); refusing it here writes nothing for it and says why.
func (e *extractor) symlinkAt(name string) string {
	if len(e.symlinkName) == 0 {
		return ""
	}
	for p := name; p != ""; p, _ = splitName(p) {
		if e.symlinkName[p] {
			return p
		}
	}
	return ""
}

func (e *extractor) makeDir(name string, perm uint32, mtime time.Time) error {
	pfd, base, err := e.parent(name)
	if err != nil {
		return err
	}
	// Owner rwx until finishDirs sets the archive's mode, so that entries
	// below it can be written whatever that mode is.
	err = mkdirat(pfd, base, perm|0o700)
	d := e.dirs[name]
	switch {
	case err == nil:
		d = &dirEntry{}
		e.dirs[name] = d
		e.stats.Dirs++
		if err := e.record(pfd, base); err != nil {
			return err
		}
	case errors.Is(err, unix.EEXIST) && d != nil && !d.explicit:
		// Made earlier as the parent of an entry that came before this one.
	default:
		return fmt.Errorf("create directory: %w", err)
	}
	d.explicit, d.mode, d.mtime = true, perm, mtime
	return nil
}

func (e *extractor) writeFile(name string, perm uint32, mtime time.Time, data io.Reader) error {
	pfd, base, err := e.parent(name)
	if err != nil {
		return err
	}
	fd, err := openat(pfd, base, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, perm)
	if err != nil {
		return fmt.Errorf("create file: %w", err)
	}
	n, err := io.CopyBuffer(fdWriter(fd), data, e.buf)
	e.stats.Bytes += n
	if err != nil {
		// A cut-off file must not stay: Syncthing would index it as the
		// container's own version and keep it as a conflict copy.
		unix.Close(fd)
		_ = retry(func() error { return unix.Unlinkat(pfd, base, 0) })
		return fmt.Errorf("write file: %w", err)
	}
	// The exact bits, whatever the umask; no fsync: a lost file is resent
	// by Syncthing.
	err = fchmod(fd, perm)
	if cerr := unix.Close(fd); err == nil && cerr != nil && cerr != unix.EINTR {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write file: %w", err)
	}
	if err := setMtime(pfd, base, mtime); err != nil {
		return fmt.Errorf("set file time: %w", err)
	}
	if err := e.record(pfd, base); err != nil {
		return err
	}
	e.stats.Files++
	return nil
}

func (e *extractor) makeSymlink(s symlink) error {
	pfd, base, err := e.parent(s.name)
	if err != nil {
		return err
	}
	if err := symlinkat(s.target, pfd, base); err != nil {
		return fmt.Errorf("create symlink: %w", err)
	}
	e.stats.Symlinks++
	if err := setMtime(pfd, base, s.mtime); err != nil {
		return fmt.Errorf("set symlink time: %w", err)
	}
	return e.record(pfd, base)
}

// finishDirs gives the directories the archive has entries for their
// mode and mtime, last because creating entries in a directory changes
// its mtime, and deepest first so that a restrictive mode (say 0555) does
// not stop the walk to a directory below it.
func (e *extractor) finishDirs() error {
	var names []string
	for name, d := range e.dirs {
		if d.explicit {
			names = append(names, name)
		}
	}
	slices.SortFunc(names, func(a, b string) int {
		if da, db := strings.Count(a, "/"), strings.Count(b, "/"); da != db {
			return db - da
		}
		return strings.Compare(a, b)
	})
	for _, name := range names {
		if err := e.finishDir(name, e.dirs[name]); err != nil {
			return &EntryError{Name: name, Err: err}
		}
	}
	return nil
}

func (e *extractor) finishDir(name string, d *dirEntry) error {
	pfd, base, err := e.parent(name)
	if err != nil {
		return err
	}
	fd, err := openat(pfd, base, dirFlags, 0)
	if err != nil {
		return fmt.Errorf("open directory: %w", err)
	}
	err = fchmod(fd, d.mode)
	unix.Close(fd)
	if err != nil {
		return fmt.Errorf("set directory mode: %w", err)
	}
	if err := setMtime(pfd, base, d.mtime); err != nil {
		return fmt.Errorf("set directory time: %w", err)
	}
	return nil
}

// eofReader records whether the stream ended: when archive/tar then
// reports io.EOF, the end-of-archive blocks were missing.
type eofReader struct {
	r   io.Reader
	hit bool
}

func (r *eofReader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if n == 0 && err == io.EOF {
		r.hit = true
	}
	return n, err
}
