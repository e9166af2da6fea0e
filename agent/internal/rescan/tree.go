package rescan

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/fsnotify/fsnotify"

	"devtool.dev/agent/internal/stapi"
)

// folderTree keeps one inotify watch on every directory of a synced
// folder (inotify is not recursive) and turns events into changed paths.
type folderTree struct {
	id      string
	root    string // absolute, symlinks resolved (as Syncthing does)
	marker  string // the folder's markerName
	watcher *fsnotify.Watcher
	ignores plainIgnores
	// dirs are the watched directories, relative to root ("" is root).
	// fsnotify does not follow renames of non-recursive watches, so a
	// renamed or deleted tree's watches are dropped here and the new
	// location is watched afresh.
	dirs map[string]bool
	// stale means the watches may not match the tree any more (lost
	// events, changed .stignore): walk it again before the next scan.
	stale        bool
	reloadIgnore bool
	echoes       *pullEchoes
	// onWatchLimit is called when the kernel refuses a watch (ENOSPC).
	onWatchLimit func(folderID string, watched int)
	log          *stapi.ThrottledLog
}

// errWatchLimit stops a walk: every further watch would fail too.
var errWatchLimit = errors.New("inotify watch limit reached")

func (t *folderTree) abs(rel string) string {
	return filepath.Join(t.root, filepath.FromSlash(rel))
}

// relPath converts an event's path to the slash-separated path Syncthing
// uses; ok is false for a path outside the folder.
func (t *folderTree) relPath(name string) (rel string, ok bool) {
	r, err := filepath.Rel(t.root, name)
	if err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
		return "", false
	}
	if r == "." {
		return "", true
	}
	return filepath.ToSlash(r), true
}

// skip reports whether changes at rel are of no interest to Syncthing.
func (t *folderTree) skip(rel string) bool {
	return isSyncthingEntry(rel, t.marker) || t.ignores.matches(rel)
}

// loadIgnores reads the plain lines of the folder's .stignore.
func (t *folderTree) loadIgnores() {
	data, err := os.ReadFile(t.abs(stignoreName))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.log.Printf("folder %s: read %s: %v (watching every directory)", t.id, stignoreName, err)
	}
	t.ignores = parsePlainIgnores(data)
}

// resync walks the whole folder again: watches what is not watched yet,
// and drops the watches of directories that are gone or now ignored.
func (t *folderTree) resync() {
	seen := map[string]bool{}
	t.watchTree("", seen)
	for rel := range t.dirs {
		if !seen[rel] {
			t.watcher.Remove(t.abs(rel)) // gone already, or ignored now
		}
	}
	t.dirs, t.stale = seen, false
}

// watchTree watches the directory rel and every directory below it that
// is not skipped, recording them in into. It does not follow symlinks
// (Syncthing syncs them as links).
func (t *folderTree) watchTree(rel string, into map[string]bool) {
	filepath.WalkDir(t.abs(rel), func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return nil // vanished or unreadable: Syncthing's scan reports it
		}
		r, ok := t.relPath(p)
		if !ok || (r != "" && t.skip(r)) {
			return filepath.SkipDir
		}
		switch err := t.watcher.Add(p); {
		case err == nil:
			into[r] = true
		case errors.Is(err, syscall.ENOSPC):
			t.onWatchLimit(t.id, len(into))
			return errWatchLimit
		case errors.Is(err, fs.ErrNotExist):
			return filepath.SkipDir // removed meanwhile; its event follows
		default:
			t.log.Printf("folder %s: cannot watch %s: %v (its changes sync with Syncthing's own delay)", t.id, p, err)
			return filepath.SkipDir
		}
		return nil
	})
}

// unwatchTree drops the watches of rel and everything below it, after
// rel was deleted or renamed away.
func (t *folderTree) unwatchTree(rel string) {
	if !t.dirs[rel] {
		return // a file, or a directory we did not watch
	}
	for d := range t.dirs {
		if d == rel || strings.HasPrefix(d, rel+"/") {
			t.watcher.Remove(t.abs(d)) // an error means the kernel dropped it already
			delete(t.dirs, d)
		}
	}
}

// handle applies one event to the watches and records the changed path
// in b. It reports whether the folder root itself went away.
func (t *folderTree) handle(ev fsnotify.Event, b *batch) (rootGone bool) {
	rel, ok := t.relPath(ev.Name)
	switch {
	case !ok:
		return false
	case rel == "":
		return ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename)
	case isSyncthingTemp(rel):
		if ev.Has(fsnotify.Rename) {
			t.echoes.tempMoved(rel)
		}
		return false
	case rel == stignoreName:
		// Syncthing rereads it on every scan but does not rescan what
		// it un-ignores: scan everything.
		t.reloadIgnore, t.stale = true, true
		b.scanAll()
		return false
	case t.skip(rel):
		return false
	}
	if t.echoes.pullChtimes(rel, ev.Op == fsnotify.Chmod) {
		return false
	}
	if ev.Has(fsnotify.Create) && t.echoes.landing(rel) {
		// Syncthing's own pull: it indexes the file itself. An earlier
		// event on rel in this batch (the old file's removal) is its too.
		b.forget(rel)
		return false
	}
	if ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename) {
		// A rename arrives as Rename of the old path, then Create of
		// the new one; Syncthing finds either gone or new when it scans.
		t.unwatchTree(rel)
	}
	if ev.Has(fsnotify.Create) {
		if info, err := os.Lstat(t.abs(rel)); err == nil && info.IsDir() {
			// Files may have landed in it before its watch existed:
			// reporting the directory has Syncthing scan all of it.
			t.watchTree(rel, t.dirs)
		}
	}
	b.add(rel)
	return false
}

// refresh brings the watches up to date before a scan request is sent.
func (t *folderTree) refresh() {
	if t.reloadIgnore {
		t.loadIgnores()
		t.reloadIgnore = false
	}
	if t.stale {
		t.resync()
	}
}
