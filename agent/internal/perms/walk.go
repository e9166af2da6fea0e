package perms

import (
	"io/fs"
	"path/filepath"
	"syscall"
	"time"
)

// changedSince adds to items every file and directory of the folders whose
// inode changed at or after t: whatever the puller wrote or touched since
// then (it writes a new file, or sets the mtime of one whose content was
// already right) is among them. Only these are looked up in Syncthing, so
// a walk of an unchanged tree costs one lstat per entry and no request.
// A directory whose bits alone changed on the laptop while events were
// lost is not found (the puller leaves its inode alone under ignorePerms);
// it is set on its next change.
func (a *applier) changedSince(t time.Time, items []item) []item {
	seen := make(map[item]bool, len(items))
	for _, it := range items {
		seen[it] = true
	}
	for i, f := range a.folders {
		root := filepath.Clean(f.Path)
		filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || p == root {
				return nil // unreadable: skipped (a missing root: nothing yet)
			}
			rel := filepath.ToSlash(p[len(root)+1:])
			if rel == ".stversions" && d.IsDir() {
				return filepath.SkipDir // Syncthing's archive, not synced
			}
			if !d.IsDir() && !d.Type().IsRegular() {
				return nil // symlinks and the rest carry no bits of their own
			}
			info, err := d.Info()
			if err != nil {
				return nil
			}
			st, ok := info.Sys().(*syscall.Stat_t)
			if !ok || time.Unix(st.Ctim.Unix()).Before(t) {
				return nil
			}
			if it := (item{folder: i, name: rel}); !seen[it] {
				seen[it] = true
				items = append(items, it)
			}
			return nil
		})
	}
	return items
}
