package perms

import (
	"cmp"
	"slices"
	"strings"
	"sync"
	"time"
)

// maxQueued bounds the items waiting to be applied; beyond it they are
// dropped for a catch-up walk, which finds them on disk by change time.
const maxQueued = 50_000

// item is one path of a synced folder (index into applier.folders).
type item struct {
	folder int
	name   string // relative, with /
}

// queue collects items between the event reader and the applier: each
// item once however often it was pulled (a burst is applied as one
// batch), plus the earliest time a catch-up walk must look back to.
type queue struct {
	mu          sync.Mutex
	items       map[item]struct{}
	firstQueued time.Time // when the oldest waiting item was queued
	walkSince   time.Time // zero: no walk
	wake        chan struct{}
}

func newQueue() *queue {
	return &queue{items: map[item]struct{}{}, wake: make(chan struct{}, 1)}
}

func (q *queue) signal() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

func (q *queue) add(it item) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.items) == 0 {
		q.firstQueued = time.Now()
	}
	if len(q.items) >= maxQueued {
		q.catchUpLocked(q.firstQueued.Add(-ctimeSlack))
		clear(q.items)
		return
	}
	q.items[it] = struct{}{}
	q.signal()
}

// catchUp asks for a walk of every folder for items changed since t.
func (q *queue) catchUp(t time.Time) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.catchUpLocked(t)
}

func (q *queue) catchUpLocked(t time.Time) {
	if q.walkSince.IsZero() || t.Before(q.walkSince) {
		q.walkSince = t
	}
	q.signal()
}

// take returns what is waiting and empties the queue.
func (q *queue) take() (items []item, walkSince time.Time) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for it := range q.items {
		items = append(items, it)
	}
	clear(q.items)
	walkSince, q.walkSince = q.walkSince, time.Time{}
	return items, walkSince
}

// putBack queues items again (Syncthing did not answer for them).
func (q *queue) putBack(items []item) {
	for _, it := range items {
		q.add(it)
	}
}

// deepestFirst orders a batch so that a directory comes after what is in
// it: a directory the laptop made unsearchable (say 0600) is changed last,
// when nothing below it needs to be reached any more.
func deepestFirst(items []item) {
	slices.SortFunc(items, func(x, y item) int {
		if c := cmp.Compare(strings.Count(y.name, "/"), strings.Count(x.name, "/")); c != 0 {
			return c
		}
		if c := cmp.Compare(x.folder, y.folder); c != 0 {
			return c
		}
		return strings.Compare(x.name, y.name)
	})
}
