// Package perms applies the laptop's permission bits in the container.
//
// The container's Syncthing folders run with ignorePerms: what the
// container scans is announced without permission bits, so an executable
// bit set in the container (a planted git hook) never reaches the laptop,
// and files made there arrive on the laptop without one. The same setting
// makes the container's puller ignore the laptop's bits too: a script made
// or `chmod +x`-ed on the laptop would arrive as 0644. This package gives
// that direction back. It follows Syncthing's ItemFinished events (one per
// file or directory its puller finished), looks up each item's global
// entry and, when that entry carries permission bits (only the laptop's
// do), sets them on the item in the container.
package perms

import (
	"context"
	"runtime/debug"
	"strings"
	"time"

	"devtool.dev/agent/internal/config"
	"devtool.dev/agent/internal/stapi"
)

// Defaults of Options.
const (
	// DefaultPollTimeout is how long one request for events waits when
	// nothing happens (Syncthing's own default): one request a minute,
	// plus a status request to notice a restarted Syncthing.
	DefaultPollTimeout = 60 * time.Second
	// DefaultRetryInterval is the pause after a failed request.
	DefaultRetryInterval = time.Second
	// logInterval throttles repeated messages.
	logInterval = time.Minute
)

// Options configures Run.
type Options struct {
	// Folders of the contract; only those with IgnorePerms are handled
	// (elsewhere Syncthing applies permission bits itself).
	Folders    []config.Folder
	GUIAddress string // Syncthing's REST API, host:port
	APIKey     string
	// SelfDeviceID is this Syncthing's device ID: entries it modified are
	// never applied, whatever bits they carry (under ignorePerms they
	// carry none; entries from before the folder ignored them might).
	SelfDeviceID  string
	Logf          func(format string, args ...any)
	PollTimeout   time.Duration // 0: DefaultPollTimeout
	RetryInterval time.Duration // 0: DefaultRetryInterval
}

// applier follows the event stream (follow) and applies what it queues
// (work), in two goroutines so a burst being applied never delays reading
// events (Syncthing keeps only the last 1,000 per subscription).
type applier struct {
	opts     Options
	folders  []config.Folder
	index    map[string]int // folder ID -> position in folders
	selfID   string         // short device ID as Syncthing prints modifiedBy
	api      *stapi.Client
	queue    *queue
	failures *stapi.ThrottledLog // what went wrong
	applied  *stapi.ThrottledLog // what was changed
}

// Run applies the laptop's permission bits until ctx is cancelled. It
// never fails and never panics: whatever goes wrong is logged (at most a
// line a minute per kind) and retried.
func Run(ctx context.Context, opts Options) {
	if opts.PollTimeout <= 0 {
		opts.PollTimeout = DefaultPollTimeout
	}
	if opts.RetryInterval <= 0 {
		opts.RetryInterval = DefaultRetryInterval
	}
	if opts.Logf == nil {
		opts.Logf = func(string, ...any) {}
	}
	a := &applier{opts: opts, index: map[string]int{}, queue: newQueue()}
	var ids []string
	for _, f := range opts.Folders {
		if f.IgnorePerms {
			a.index[f.ID] = len(a.folders)
			a.folders = append(a.folders, f)
			ids = append(ids, f.ID)
		}
	}
	if len(a.folders) == 0 {
		return
	}
	a.selfID = shortID(opts.SelfDeviceID)
	// A request for events waits up to PollTimeout for an answer.
	a.api = stapi.NewClient(opts.GUIAddress, opts.APIKey, opts.PollTimeout+30*time.Second)
	defer a.api.CloseIdleConnections()
	a.failures = stapi.NewThrottledLog(opts.Logf, "perms: ", logInterval)
	a.applied = stapi.NewThrottledLog(opts.Logf, "perms: ", logInterval)
	opts.Logf("perms: applying the laptop's permission bits in folder %s (Syncthing ignores permissions there)", strings.Join(ids, ", "))

	done := make(chan struct{}, 2)
	for _, loop := range []func(context.Context){a.follow, a.work} {
		go func() {
			defer func() { done <- struct{}{} }()
			a.keepRunning(ctx, loop)
		}()
	}
	<-done
	<-done
}

// keepRunning runs loop until ctx is cancelled, starting it again after
// a panic: the agent is PID 1 of the container, and a bug here must not
// take the container down.
func (a *applier) keepRunning(ctx context.Context, loop func(context.Context)) {
	for ctx.Err() == nil {
		func() {
			defer func() {
				if r := recover(); r != nil {
					a.opts.Logf("perms: internal error (restarting in %s): %v\n%s", a.opts.RetryInterval, r, debug.Stack())
					a.sleep(ctx)
				}
			}()
			loop(ctx)
		}()
	}
}

// sleep waits RetryInterval or until ctx is cancelled.
func (a *applier) sleep(ctx context.Context) {
	t := time.NewTimer(a.opts.RetryInterval)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// shortID is how Syncthing's REST API prints a device in modifiedBy: the
// first 64 bits of its ID in base32, which are the ID's first 7 letters.
func shortID(deviceID string) string {
	if len(deviceID) < 7 {
		return ""
	}
	return strings.ToUpper(deviceID[:7])
}
