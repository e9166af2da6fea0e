package supervisor

import (
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// reaper is the only place in the process that waits for children. As
// PID 1 (or a child subreaper) we inherit every orphan in the container,
// e.g. a daemon the user started over SSH, and must wait for them or they
// stay zombies forever. wait4(-1) collects those and our own children
// alike, so os/exec's per-child Wait must never be used in this process:
// it would race with us for the exit status.
type reaper struct {
	mu      sync.Mutex
	waiters map[int]chan syscall.WaitStatus
	orphan  func(pid int, ws syscall.WaitStatus)
	stop    chan struct{}
	done    chan struct{}
}

func newReaper(orphan func(int, syscall.WaitStatus)) *reaper {
	return &reaper{
		waiters: map[int]chan syscall.WaitStatus{},
		orphan:  orphan,
		stop:    make(chan struct{}),
		done:    make(chan struct{}),
	}
}

// becomeSubreaper makes orphans of our descendants re-parent to us even
// when we are not PID 1 (tests, or a pod with shareProcessNamespace where
// PID 1 is the pause container).
func becomeSubreaper() error {
	return unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
}

// start registers the child started by fn under the lock that dispatch
// takes too, so an exit collected before fn returns cannot be mistaken
// for an orphan's.
func (r *reaper) start(fn func() (int, error)) (int, <-chan syscall.WaitStatus, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	pid, err := fn()
	if err != nil {
		return 0, nil, err
	}
	ch := make(chan syscall.WaitStatus, 1)
	r.waiters[pid] = ch
	return pid, ch, nil
}

func (r *reaper) run() {
	defer close(r.done)
	sigs := make(chan os.Signal, 16)
	signal.Notify(sigs, syscall.SIGCHLD)
	defer signal.Stop(sigs)
	// SIGCHLDs coalesce, and one may arrive before Notify; the tick is a
	// cheap safety net so nothing stays a zombie for long.
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		r.reapAll()
		select {
		case <-r.stop:
			r.reapAll()
			return
		case <-sigs:
		case <-tick.C:
		}
	}
}

func (r *reaper) reapAll() {
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
		if err == syscall.EINTR {
			continue
		}
		if pid <= 0 || err != nil { // 0: children remain but none exited; ECHILD: none at all
			return
		}
		r.mu.Lock()
		ch, ok := r.waiters[pid]
		delete(r.waiters, pid)
		r.mu.Unlock()
		if ok {
			ch <- ws
		} else if r.orphan != nil {
			r.orphan(pid, ws)
		}
	}
}

func (r *reaper) close() {
	close(r.stop)
	<-r.done
}
