package rescan

import (
	"net/url"
	"sort"
	"strings"
)

// batch collects the changed paths of one folder until they are sent as
// one scan request.
type batch struct {
	maxPaths int
	// paths holds slash-separated paths relative to the folder root, none
	// inside another: Syncthing scans a sub path recursively, so a pending
	// directory already covers everything below it.
	paths map[string]bool
	// whole means scan the whole folder: too many paths, a lost event
	// (inotify queue overflow) or changed ignore patterns.
	whole bool
}

func newBatch(maxPaths int) *batch {
	return &batch{maxPaths: maxPaths, paths: map[string]bool{}}
}

func (b *batch) empty() bool { return !b.whole && len(b.paths) == 0 }

// scanAll turns the batch into a whole-folder scan.
func (b *batch) scanAll() {
	b.whole = true
	clear(b.paths) // bounded memory however many events follow
}

// add records a changed path.
func (b *batch) add(rel string) {
	if b.whole {
		return
	}
	for dir := rel; ; {
		i := strings.LastIndexByte(dir, '/')
		if i < 0 {
			break
		}
		dir = dir[:i]
		if b.paths[dir] {
			return // a pending parent covers it
		}
	}
	for p := range b.paths {
		if strings.HasPrefix(p, rel+"/") {
			delete(b.paths, p) // rel covers it now
		}
	}
	b.paths[rel] = true
	if len(b.paths) > b.maxPaths {
		b.scanAll()
	}
}

// forget drops a path recorded earlier (not one a parent covers).
func (b *batch) forget(rel string) { delete(b.paths, rel) }

// take returns the batch's scan request and empties the batch.
func (b *batch) take(folderID string) string {
	var subs []string
	if !b.whole {
		for p := range b.paths {
			subs = append(subs, p)
		}
	}
	b.whole = false
	clear(b.paths)
	return scanQuery(folderID, subs)
}

// scanQuery is the query string of Syncthing's POST /rest/db/scan: the
// folder, and the paths to scan in it (sorted, for stable requests); no
// path means the whole folder.
func scanQuery(folderID string, subs []string) string {
	q := url.Values{"folder": {folderID}}
	if len(subs) > 0 {
		subs = append([]string(nil), subs...)
		sort.Strings(subs)
		q["sub"] = subs
	}
	return q.Encode()
}
