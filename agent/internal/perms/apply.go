package perms

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"devtool.dev/agent/internal/stapi"
)

// globalEntry is what /rest/db/file says of the newest version of an item
// in the cluster (the one the puller just wrote).
type globalEntry struct {
	Type          string `json:"type"` // FILE_INFO_TYPE_FILE, _DIRECTORY, _SYMLINK...
	Deleted       bool   `json:"deleted"`
	Invalid       bool   `json:"invalid"`
	NoPermissions bool   `json:"noPermissions"`
	Permissions   string `json:"permissions"` // octal, e.g. "0755"; absent with noPermissions
	ModifiedBy    string `json:"modifiedBy"`  // short device ID
}

// work applies queued items, batch by batch, until ctx is cancelled.
func (a *applier) work(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-a.queue.wake:
		}
		items, walkSince := a.queue.take()
		if !walkSince.IsZero() {
			items = a.changedSince(walkSince, items)
		}
		deepestFirst(items)
		for i, it := range items {
			if err := a.apply(ctx, it); err != nil {
				if ctx.Err() != nil {
					return
				}
				// Syncthing is down or restarting: keep the rest for later.
				a.failures.Printf("looking up %s in folder %s failed: %v; retrying", it.name, a.folders[it.folder].ID, err)
				a.queue.putBack(items[i:])
				a.sleep(ctx)
				break
			}
		}
	}
}

// apply sets one item's bits to its global entry's, if that entry is the
// laptop's and carries bits. It returns an error only when Syncthing could
// not be asked (the item is tried again); an error answer, or a failure on
// disk, is logged and the item dropped.
func (a *applier) apply(ctx context.Context, it item) error {
	f := a.folders[it.folder]
	if !plainName(it.name) {
		return nil // not a plain path below the folder: never from Syncthing
	}
	var answer struct {
		Global globalEntry `json:"global"`
	}
	q := url.Values{"folder": {f.ID}, "file": {it.name}}
	rctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	err := a.api.Do(rctx, http.MethodGet, "/rest/db/file", q.Encode(), &answer)
	var status *stapi.StatusError
	if errors.As(err, &status) {
		if status.Code != http.StatusNotFound { // 404: not in the index (ignored), or no such folder
			a.failures.Printf("folder %s: looking up %s: %v", f.ID, it.name, err)
		}
		return nil // Syncthing answered: asking again would get the same answer
	}
	if err != nil {
		return err
	}
	perm, isDir, ok := a.wanted(answer.Global)
	if !ok {
		return nil
	}
	old, changed, err := chmodNoFollow(f.Path, it.name, perm, isDir)
	switch {
	case errors.Is(err, errNotThere):
	case err != nil:
		a.failures.Printf("folder %s: cannot set %s to the laptop's mode %04o: %v", f.ID, it.name, perm, err)
	case changed:
		a.applied.Printf("folder %s: %s: mode %04o -> %04o (the laptop's)", f.ID, it.name, old, perm)
	}
	return nil
}

// wanted says which bits a global entry asks for: none unless it is a
// live file or directory whose bits were set by another device (the
// laptop).
func (a *applier) wanted(g globalEntry) (perm uint32, isDir, ok bool) {
	if g.Deleted || g.Invalid || g.NoPermissions || g.Permissions == "" {
		return 0, false, false
	}
	if a.selfID != "" && strings.EqualFold(g.ModifiedBy, a.selfID) {
		return 0, false, false
	}
	switch g.Type {
	case "FILE_INFO_TYPE_FILE":
	case "FILE_INFO_TYPE_DIRECTORY":
		isDir = true
	default:
		return 0, false, false
	}
	mode, err := strconv.ParseUint(g.Permissions, 8, 32)
	if err != nil {
		return 0, false, false
	}
	return uint32(mode) & 0o777, isDir, true
}

// plainName reports whether name is a relative path whose components are
// all real names (no "", ".", ".." or NUL): chmodNoFollow opens them one
// by one.
func plainName(name string) bool {
	if strings.ContainsRune(name, 0) {
		return false
	}
	for c := range strings.SplitSeq(name, "/") {
		if c == "" || c == "." || c == ".." {
			return false
		}
	}
	return true
}
