package main

import (
	"context"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
)

// daemonConfig is how tenants' daemons are started.
type daemonConfig struct {
	buildkitd string // the binary
	config    string // buildkitd.toml, shared by every tenant
	root      string // each tenant's state (cache, content, history) is root/<tenant>
	run       string // each tenant's socket is run/<tenant>.sock
	max       int    // daemons running at once
	keep      int    // users' roots kept on disk (the least recently used beyond are deleted)
	idle      time.Duration
	ready     time.Duration // how long a starting daemon may take to answer
}

// daemon is one tenant's buildkitd.
type daemon struct {
	tenant  string
	cmd     *exec.Cmd
	conn    *grpc.ClientConn
	started chan struct{} // closed once it answers or failed (err)
	err     error
	exited  chan struct{}
	calls   int
	idle    *time.Timer
}

// tenantDaemons runs one buildkitd per tenant, on demand: started by a
// tenant's first call, stopped after idle without calls, at most max at
// once (the longest idle one makes room; none idle: the call is refused).
type tenantDaemons struct {
	cfg     daemonConfig
	start   func(cfg daemonConfig, tenant string) (*exec.Cmd, error)
	mu      sync.Mutex
	running map[string]*daemon
}

func newTenantDaemons(cfg daemonConfig) *tenantDaemons {
	return &tenantDaemons{cfg: cfg, start: startBuildkitd, running: map[string]*daemon{}}
}

func socketOf(cfg daemonConfig, tenant string) string { return filepath.Join(cfg.run, tenant+".sock") }

// buildkitdArgs is the command line of a tenant's daemon: its own root and
// a unix socket only the gateway reaches (no TCP listener, no TLS).
func buildkitdArgs(cfg daemonConfig, tenant string) []string {
	return []string{"--config", cfg.config, "--root", filepath.Join(cfg.root, tenant), "--addr", "unix://" + socketOf(cfg, tenant)}
}

func startBuildkitd(cfg daemonConfig, tenant string) (*exec.Cmd, error) {
	if err := os.MkdirAll(cfg.run, 0o700); err != nil {
		return nil, err
	}
	_ = os.Remove(socketOf(cfg, tenant))
	cmd := exec.Command(cfg.buildkitd, buildkitdArgs(cfg, tenant)...)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	return cmd, cmd.Start()
}

func (t *tenantDaemons) acquire(ctx context.Context, tenant string) (*grpc.ClientConn, func(), error) {
	t.mu.Lock()
	d := t.running[tenant]
	if d == nil {
		if len(t.running) >= t.cfg.max && !t.stopOneIdleLocked() {
			t.mu.Unlock()
			return nil, nil, status.Errorf(codes.ResourceExhausted, "the builder runs %d users' builds already: try again in a few minutes", t.cfg.max)
		}
		d = &daemon{tenant: tenant, started: make(chan struct{}), exited: make(chan struct{})}
		t.running[tenant] = d
		go t.launch(d)
	}
	d.calls++
	if d.idle != nil {
		d.idle.Stop()
		d.idle = nil
	}
	t.mu.Unlock()
	release := func() { t.release(d) }
	select {
	case <-d.started:
	case <-ctx.Done():
		release()
		return nil, nil, ctx.Err()
	}
	if d.err != nil {
		release()
		return nil, nil, status.Errorf(codes.Unavailable, "starting the build daemon failed: %v", d.err)
	}
	return d.conn, release, nil
}

func (t *tenantDaemons) release(d *daemon) {
	t.mu.Lock()
	defer t.mu.Unlock()
	d.calls--
	if d.calls == 0 && t.running[d.tenant] == d {
		d.idle = time.AfterFunc(t.cfg.idle, func() {
			t.mu.Lock()
			defer t.mu.Unlock()
			if d.calls == 0 && t.running[d.tenant] == d {
				t.stopLocked(d)
			}
		})
	}
}

// stopOneIdleLocked stops a daemon without calls; false if all are busy.
func (t *tenantDaemons) stopOneIdleLocked() bool {
	for _, d := range t.running {
		if d.calls == 0 {
			t.stopLocked(d)
			return true
		}
	}
	return false
}

// stopLocked forgets d and stops its process in the background (SIGTERM:
// buildkitd unmounts and closes its database; SIGKILL after 30 s).
func (t *tenantDaemons) stopLocked(d *daemon) {
	delete(t.running, d.tenant)
	if d.idle != nil {
		d.idle.Stop()
	}
	go func() {
		<-d.started
		if d.conn != nil {
			d.conn.Close()
		}
		if d.cmd == nil || d.cmd.Process == nil {
			return
		}
		_ = d.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-d.exited:
		case <-time.After(30 * time.Second):
			_ = syscall.Kill(-d.cmd.Process.Pid, syscall.SIGKILL)
		}
		log.Printf("tenant %s: build daemon stopped", d.tenant)
	}()
}

// launch starts d's process and waits until it answers Info.
func (t *tenantDaemons) launch(d *daemon) {
	defer close(d.started)
	t.mu.Lock()
	busy := map[string]bool{}
	for tenant := range t.running {
		busy[tenant] = true
	}
	t.mu.Unlock()
	pruneRoots(t.cfg, busy)
	cmd, err := t.start(t.cfg, d.tenant)
	if err != nil {
		d.err = err
		t.forget(d)
		return
	}
	d.cmd = cmd
	go func() {
		err := cmd.Wait()
		// The root's time says when its user last built (pruneRoots keeps the recent ones).
		now := time.Now()
		_ = os.Chtimes(filepath.Join(t.cfg.root, d.tenant), now, now)
		close(d.exited)
		log.Printf("tenant %s: build daemon exited: %v", d.tenant, err)
		t.forget(d)
	}()
	d.conn, err = grpc.NewClient("unix://"+socketOf(t.cfg, d.tenant), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		d.err = err
		return
	}
	deadline := time.Now().Add(t.cfg.ready)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		in, out := []byte{}, []byte{}
		err = d.conn.Invoke(ctx, "/moby.buildkit.v1.Control/Info", &in, &out, grpc.ForceCodec(rawCodec{}))
		cancel()
		if err == nil {
			log.Printf("tenant %s: build daemon ready (pid %d)", d.tenant, cmd.Process.Pid)
			return
		}
		select {
		case <-d.exited:
			d.err = fmt.Errorf("buildkitd exited: %v", cmd.ProcessState)
			return
		case <-time.After(300 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			d.err = fmt.Errorf("buildkitd did not answer within %s: %v", t.cfg.ready, err)
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			return
		}
	}
}

// forget removes d once its process is gone (a later call starts a new one).
func (t *tenantDaemons) forget(d *daemon) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.running[d.tenant] == d {
		delete(t.running, d.tenant)
		if d.idle != nil {
			d.idle.Stop()
		}
	}
}

// stopAll stops every daemon and waits for them (the gateway's shutdown).
func (t *tenantDaemons) stopAll(timeout time.Duration) {
	t.mu.Lock()
	all := make([]*daemon, 0, len(t.running))
	for _, d := range t.running {
		all = append(all, d)
		t.stopLocked(d)
	}
	t.mu.Unlock()
	deadline := time.After(timeout)
	for _, d := range all {
		select {
		case <-d.exited:
		case <-deadline:
			return
		}
	}
}

// rootsToDelete picks, among the users' roots on disk, the least recently
// used beyond keep, never one of busy (running or starting).
func rootsToDelete(roots []os.DirEntry, keep int, busy map[string]bool) []string {
	type root struct {
		name string
		used time.Time
	}
	var idle []root
	for _, e := range roots {
		if !e.IsDir() || busy[e.Name()] {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue
		}
		idle = append(idle, root{e.Name(), info.ModTime()})
	}
	excess := len(idle) + len(busy) - keep
	if excess <= 0 {
		return nil
	}
	sort.Slice(idle, func(i, j int) bool { return idle[i].used.Before(idle[j].used) })
	var out []string
	for _, r := range idle[:min(excess, len(idle))] {
		out = append(out, r.name)
	}
	return out
}

// pruneRoots bounds the disk the users' caches take: each daemon keeps its
// own under maxUsedSpace, and only keep roots stay. A root something is
// still mounted under (a daemon that did not stop cleanly) is left alone.
func pruneRoots(cfg daemonConfig, busy map[string]bool) {
	entries, err := os.ReadDir(cfg.root)
	if err != nil {
		return
	}
	mounts, _ := os.ReadFile("/proc/self/mountinfo")
	for _, name := range rootsToDelete(entries, cfg.keep, busy) {
		dir := filepath.Join(cfg.root, name)
		if strings.Contains(string(mounts), " "+dir+"/") {
			log.Printf("tenant %s: its build cache is still mounted, not deleted", name)
			continue
		}
		if err := os.RemoveAll(dir); err != nil {
			log.Printf("tenant %s: deleting its build cache: %v", name, err)
			continue
		}
		log.Printf("tenant %s: build cache deleted (least recently used beyond %d)", name, cfg.keep)
	}
}
