// Package supervisor runs the dev container's processes as its PID 1:
// the agents (Syncthing, the SSH server), restarted with backoff when they
// die, and the user's optional command, run once. It reaps every zombie in
// the container and stops everything cleanly on shutdown.
package supervisor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"
)

// Spec describes one child process.
type Spec struct {
	Name string
	Path string
	// Argv0 is the child's argv[0] ("": Path). A multi-call binary picks
	// its program by it (the host bundle run as Syncthing).
	Argv0 string
	Args  []string // without argv[0]
	Env   []string // nil: the supervisor's environment
	Dir   string   // "": the supervisor's working directory
	// Restart keeps the child running: agents yes, the user command no
	// (its exit must not take the agents down, nor be retried).
	Restart bool
	// LogToFile sends stdout and stderr to <LogDir>/<Name>.log (rotated);
	// otherwise the child shares the supervisor's stdio (kubectl logs).
	LogToFile bool
	// OwnGroup puts the child in its own process group so a stop signal
	// reaches its helpers too.
	OwnGroup bool
	// PreStart runs before every start (e.g. regenerate a config file).
	// An error counts as a failed start and is retried with backoff.
	PreStart func() error
}

// Options tune the supervisor. Zero values take the defaults below.
type Options struct {
	LogDir      string
	LogMaxBytes int64         // per log file before rotation (default 5 MiB)
	LogKeep     int           // rotated files kept per child (default 2)
	BackoffMin  time.Duration // first restart delay (default 1 s)
	BackoffMax  time.Duration // cap of the doubling delay (default 30 s)
	StableAfter time.Duration // a run this long resets the backoff (default 10 s)
	StopTimeout time.Duration // SIGTERM to SIGKILL (default 10 s)
	// Logf receives the supervisor's own events (default: stderr).
	Logf func(format string, args ...any)
	// KillAllOnStop also signals every other process in the PID namespace;
	// only meaningful (and only safe) when we are its PID 1.
	KillAllOnStop bool
}

func (o *Options) defaults() {
	if o.LogMaxBytes == 0 {
		o.LogMaxBytes = 5 << 20
	}
	if o.LogKeep == 0 {
		o.LogKeep = 2
	}
	if o.BackoffMin == 0 {
		o.BackoffMin = time.Second
	}
	if o.BackoffMax == 0 {
		o.BackoffMax = 30 * time.Second
	}
	if o.StableAfter == 0 {
		o.StableAfter = 10 * time.Second
	}
	if o.StopTimeout == 0 {
		o.StopTimeout = 10 * time.Second
	}
	if o.Logf == nil {
		o.Logf = func(format string, args ...any) {
			fmt.Fprintf(os.Stderr, "devtool-agent: "+format+"\n", args...)
		}
	}
}

// Supervisor runs a fixed set of children until its context ends.
type Supervisor struct {
	opts   Options
	specs  []Spec
	reaper *reaper

	mu       sync.Mutex
	live     map[string]*child // name -> running child
	stopping bool
}

type child struct {
	spec Spec
	pid  int
}

// New returns a supervisor for specs.
func New(opts Options, specs ...Spec) *Supervisor {
	opts.defaults()
	s := &Supervisor{opts: opts, specs: specs, live: map[string]*child{}}
	s.reaper = newReaper(func(pid int, ws syscall.WaitStatus) {
		s.opts.Logf("reaped orphan pid %d (%s)", pid, describe(ws))
	})
	return s
}

// Run starts every child and blocks until ctx is done and all children
// have stopped (SIGTERM, then SIGKILL after StopTimeout).
func (s *Supervisor) Run(ctx context.Context) error {
	if err := becomeSubreaper(); err != nil {
		s.opts.Logf("cannot become child subreaper (orphans of children may stay zombies): %v", err)
	}
	go s.reaper.run()
	defer s.reaper.close()

	stop := make(chan struct{})
	var wg sync.WaitGroup
	for _, sp := range s.specs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.keep(sp, stop)
		}()
	}

	<-ctx.Done()
	s.mu.Lock()
	s.stopping = true
	s.mu.Unlock()
	close(stop)
	s.opts.Logf("stopping: SIGTERM to children")
	s.signalAll(syscall.SIGTERM)

	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(s.opts.StopTimeout):
		s.opts.Logf("children still running after %s: SIGKILL", s.opts.StopTimeout)
		s.signalAll(syscall.SIGKILL)
		select {
		case <-done:
		case <-time.After(2 * time.Second):
			return errors.New("children did not exit after SIGKILL")
		}
	}
	s.opts.Logf("stopped")
	return nil
}

// keep runs one spec until stop, restarting it with backoff if it should.
func (s *Supervisor) keep(sp Spec, stop <-chan struct{}) {
	delay := time.Duration(0)
	for {
		if delay > 0 {
			s.opts.Logf("%s: restarting in %s", sp.Name, delay)
			select {
			case <-stop:
				return
			case <-time.After(delay):
			}
		}
		started := time.Now()
		ws, err := s.runOnce(sp, stop)
		ran := time.Since(started)
		switch {
		case err != nil:
			s.opts.Logf("%s: %v", sp.Name, err)
		case s.isStopping():
			s.opts.Logf("%s: stopped (%s)", sp.Name, describe(ws))
			return
		default:
			s.opts.Logf("%s: exited (%s) after %s", sp.Name, describe(ws), ran.Round(time.Millisecond))
		}
		if !sp.Restart || s.isStopping() {
			return
		}
		// Exponential backoff so a child that crashes at once does not
		// spin; a child that ran a while starts again promptly.
		switch {
		case ran >= s.opts.StableAfter || delay == 0:
			delay = s.opts.BackoffMin
		default:
			delay = min(delay*2, s.opts.BackoffMax)
		}
	}
}

// runOnce starts sp and waits for it to exit.
func (s *Supervisor) runOnce(sp Spec, stop <-chan struct{}) (syscall.WaitStatus, error) {
	if sp.PreStart != nil {
		if err := sp.PreStart(); err != nil {
			return 0, fmt.Errorf("prepare: %w", err)
		}
	}
	files := []*os.File{os.Stdin, os.Stdout, os.Stderr}
	var out, outW *os.File
	if sp.LogToFile {
		devnull, err := os.Open(os.DevNull)
		if err != nil {
			return 0, err
		}
		defer devnull.Close()
		r, w, err := os.Pipe()
		if err != nil {
			return 0, err
		}
		out, outW = r, w
		files = []*os.File{devnull, w, w}
	}
	env := sp.Env
	if env == nil {
		env = os.Environ()
	}
	// Our copy of the pipe's write end must go once the child has its
	// own, or the log copier would never see EOF.
	closePipe := func(both bool) {
		if outW != nil {
			outW.Close()
		}
		if both && out != nil {
			out.Close()
		}
	}
	s.mu.Lock()
	if s.stopping {
		s.mu.Unlock()
		closePipe(true)
		return 0, errors.New("not started: stopping")
	}
	pid, exited, err := s.reaper.start(func() (int, error) {
		argv0 := sp.Path
		if sp.Argv0 != "" {
			argv0 = sp.Argv0
		}
		p, err := os.StartProcess(sp.Path, append([]string{argv0}, sp.Args...), &os.ProcAttr{
			Dir: sp.Dir, Env: env, Files: files,
			Sys: &syscall.SysProcAttr{Setpgid: sp.OwnGroup},
		})
		if err != nil {
			return 0, err
		}
		pid := p.Pid
		p.Release() // we wait via the reaper, never via os.Process
		return pid, nil
	})
	if err == nil {
		s.live[sp.Name] = &child{spec: sp, pid: pid}
	}
	s.mu.Unlock()
	closePipe(err != nil)
	if err != nil {
		return 0, fmt.Errorf("start %s: %w", sp.Path, err)
	}
	s.opts.Logf("%s: started pid %d", sp.Name, pid)
	if out != nil {
		go s.copyLog(sp.Name, out)
	}

	ws := <-exited
	s.mu.Lock()
	delete(s.live, sp.Name)
	s.mu.Unlock()
	return ws, nil
}

// copyLog drains a child's output into its rotating log file.
func (s *Supervisor) copyLog(name string, r *os.File) {
	defer r.Close()
	f, err := OpenRotating(filepath.Join(s.opts.LogDir, name+".log"), s.opts.LogMaxBytes, s.opts.LogKeep)
	if err != nil {
		s.opts.Logf("%s: log file: %v (output discarded)", name, err)
		io.Copy(io.Discard, r)
		return
	}
	defer f.Close()
	io.Copy(f, r)
}

func (s *Supervisor) isStopping() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stopping
}

// signalAll sends sig to every live child (its group if it has one).
func (s *Supervisor) signalAll(sig syscall.Signal) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.live {
		target := c.pid
		if c.spec.OwnGroup {
			target = -c.pid
		}
		if err := syscall.Kill(target, sig); err != nil && err != syscall.ESRCH {
			s.opts.Logf("%s: signal %s: %v", c.spec.Name, sig, err)
		}
	}
	if s.opts.KillAllOnStop {
		// As PID 1, kill(-1) reaches every other process in the container
		// (daemons started over SSH) so they too can exit gracefully.
		syscall.Kill(-1, sig)
	}
}

// describe renders a wait status for logs.
func describe(ws syscall.WaitStatus) string {
	switch {
	case ws.Exited():
		return fmt.Sprintf("exit status %d", ws.ExitStatus())
	case ws.Signaled():
		return fmt.Sprintf("killed by %s", ws.Signal())
	default:
		return fmt.Sprintf("status %#x", int(ws))
	}
}
