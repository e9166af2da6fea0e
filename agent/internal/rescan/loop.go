package rescan

import (
	"context"
	"errors"
	"fmt"
	"syscall"
	"time"

	"github.com/fsnotify/fsnotify"

	"devtool.dev/agent/internal/config"
)

// watchFolder watches one folder whose root exists, sending a scan
// request Window after the first change of each batch. It returns when
// ctx is cancelled or the root goes away.
//
// One request is in flight at a time per folder: Syncthing answers a scan
// request only when the scan is done (and queues it behind a pull), so
// changes made meanwhile gather in the next batch instead of piling up
// requests.
func (r *rescanner) watchFolder(ctx context.Context, f config.Folder, root string) error {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		if errors.Is(err, syscall.EMFILE) {
			return fmt.Errorf("%w: raise the node's sysctl fs.inotify.max_user_instances", err)
		}
		return err
	}
	defer w.Close()

	tree := &folderTree{
		id: f.ID, root: root, marker: f.MarkerName, watcher: w,
		onWatchLimit: r.onWatchLimit, log: r.log, echoes: newPullEchoes(),
	}
	tree.loadIgnores()
	tree.resync()
	if !tree.dirs[""] {
		return fmt.Errorf("cannot watch %s", root)
	}
	r.opts.Logf("rescan: folder %s: watching %d directories in %s", f.ID, len(tree.dirs), root)

	pending := newBatch(r.opts.MaxPaths)
	window := time.NewTimer(r.opts.Window)
	window.Stop()
	var (
		windowOpen bool // the first change of pending started the window
		due        bool // the window closed; send as soon as possible
		inFlight   bool
		sent       = make(chan struct{}, 1)
	)
	defer func() {
		if inFlight {
			<-sent // its request is cancelled with ctx (or nearly done)
		}
	}()
	openWindow := func() {
		if !pending.empty() && !windowOpen && !due {
			window.Reset(r.opts.Window)
			windowOpen = true
		}
	}
	send := func() {
		if !due || inFlight {
			return
		}
		due = false
		tree.refresh() // after a .stignore change or lost events
		if pending.empty() {
			return
		}
		query := pending.take(f.ID)
		inFlight = true
		go func() {
			r.client.scan(ctx, f.ID, query)
			sent <- struct{}{}
		}()
	}

	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-w.Events:
			if !ok {
				return nil
			}
			if tree.handle(ev, pending) {
				return errRootGone
			}
			openWindow()
		case err, ok := <-w.Errors:
			if !ok {
				return nil
			}
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				// The kernel dropped events: some changes, maybe new
				// directories, are unknown.
				tree.stale = true
				pending.scanAll()
				openWindow()
			} else {
				r.log.Printf("folder %s: watch error: %v", f.ID, err)
			}
		case <-window.C:
			windowOpen, due = false, true
			send()
		case <-sent:
			inFlight = false
			send()
		}
	}
}
