package stapi

import (
	"fmt"
	"sync"
	"time"
)

// ThrottledLog logs at most one line per interval, and says how many it
// held back: a Syncthing that is down for minutes would otherwise fill
// the supervisor log with one line per saved file.
type ThrottledLog struct {
	logf     func(format string, args ...any)
	prefix   string
	interval time.Duration

	mu      sync.Mutex
	last    time.Time
	dropped int
}

// NewThrottledLog logs through logf, each line starting with prefix
// (e.g. "rescan: ").
func NewThrottledLog(logf func(string, ...any), prefix string, interval time.Duration) *ThrottledLog {
	return &ThrottledLog{logf: logf, prefix: prefix, interval: interval}
}

// Printf logs the line unless one was logged less than an interval ago.
func (t *ThrottledLog) Printf(format string, args ...any) {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := time.Now()
	if !t.last.IsZero() && now.Sub(t.last) < t.interval {
		t.dropped++
		return
	}
	msg := fmt.Sprintf(format, args...)
	if t.dropped > 0 {
		msg += fmt.Sprintf(" [%d similar messages not logged in the last %s]", t.dropped, now.Sub(t.last).Round(time.Second))
	}
	t.last, t.dropped = now, 0
	t.logf("%s%s", t.prefix, msg)
}
