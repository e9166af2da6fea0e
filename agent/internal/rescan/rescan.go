// Package rescan makes the container's Syncthing notice file changes at
// once. Syncthing's own watcher batches changes for at least a second
// (fsWatcherDelayS cannot go below 1), which puts a floor under
// container -> laptop latency. The rescanner watches the synced folders
// with inotify and asks Syncthing to scan exactly the changed paths
// (POST /rest/db/scan?folder=ID&sub=PATH) within milliseconds, as the CLI
// does on the laptop. Syncthing's watcher stays on as the safety net.
package rescan

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"devtool.dev/agent/internal/config"
	"devtool.dev/agent/internal/stapi"
)

// Defaults of Options.
const (
	// DefaultWindow is how long changes are collected after the first
	// one: a save or a `git checkout` touches several files at once, and
	// one request for all of them is cheaper than one each.
	DefaultWindow = 10 * time.Millisecond
	// DefaultMaxPaths is the most paths one request lists; beyond it the
	// whole folder is scanned (one walk beats a huge query string).
	DefaultMaxPaths = 200
	// DefaultRootPoll is how often a missing folder root is looked for
	// (Syncthing creates it on its first start).
	DefaultRootPoll = time.Second
	// logInterval throttles repeated failure messages.
	logInterval = time.Minute
)

// Options configures Run.
type Options struct {
	Folders    []config.Folder
	GUIAddress string // Syncthing's REST API, host:port
	APIKey     string
	Logf       func(format string, args ...any)
	Window     time.Duration // 0: DefaultWindow
	MaxPaths   int           // 0: DefaultMaxPaths
	RootPoll   time.Duration // 0: DefaultRootPoll
}

// Run watches every folder until ctx is cancelled. It never fails: what
// it cannot watch is left to Syncthing's own watcher, with a log line.
func Run(ctx context.Context, opts Options) {
	if opts.Window <= 0 {
		opts.Window = DefaultWindow
	}
	if opts.MaxPaths <= 0 {
		opts.MaxPaths = DefaultMaxPaths
	}
	if opts.RootPoll <= 0 {
		opts.RootPoll = DefaultRootPoll
	}
	if opts.Logf == nil {
		opts.Logf = func(string, ...any) {}
	}
	log := stapi.NewThrottledLog(opts.Logf, "rescan: ", logInterval)
	r := &rescanner{
		opts:   opts,
		log:    log,
		client: newScanClient(opts.GUIAddress, opts.APIKey, log),
	}
	defer r.client.api.CloseIdleConnections()
	var wg sync.WaitGroup
	for _, f := range opts.Folders {
		wg.Go(func() { r.keepWatching(ctx, f) })
	}
	wg.Wait()
}

type rescanner struct {
	opts      Options
	log       *stapi.ThrottledLog
	client    *scanClient
	limitOnce sync.Once
}

// onWatchLimit explains, once, what running out of inotify watches means.
func (r *rescanner) onWatchLimit(folderID string, watched int) {
	r.limitOnce.Do(func() {
		r.opts.Logf("rescan: folder %s: the kernel refused an inotify watch after %d directories (ENOSPC): "+
			"raise the node's sysctl fs.inotify.max_user_watches; until then changes in unwatched "+
			"directories sync only by Syncthing's own watcher (likely short of watches too) and its periodic rescan",
			folderID, watched)
	})
}

// errRootGone ends a folder's watch when its root is deleted or moved.
var errRootGone = errors.New("folder root removed")

// keepWatching watches one folder, waiting for its root to exist first
// and again whenever it goes away.
func (r *rescanner) keepWatching(ctx context.Context, f config.Folder) {
	retry := time.NewTicker(r.opts.RootPoll)
	defer retry.Stop()
	for {
		root, err := filepath.EvalSymlinks(f.Path)
		if err == nil {
			if info, serr := os.Stat(root); serr != nil || !info.IsDir() {
				err = fmt.Errorf("%s is not a directory", f.Path)
			}
		}
		if err == nil {
			err = r.watchFolder(ctx, f, root)
		}
		switch {
		case ctx.Err() != nil:
			return
		case errors.Is(err, errRootGone):
			r.opts.Logf("rescan: folder %s: %s was removed; waiting for it to come back", f.ID, f.Path)
		case err != nil && !errors.Is(err, os.ErrNotExist):
			r.log.Printf("folder %s: %v (retrying; Syncthing's own watcher covers it meanwhile)", f.ID, err)
		}
		select {
		case <-ctx.Done():
			return
		case <-retry.C:
		}
	}
}
