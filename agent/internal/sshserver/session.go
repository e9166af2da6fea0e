package sshserver

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/pkg/sftp"
	"golang.org/x/crypto/ssh"
	"golang.org/x/sys/unix"
)

// Payloads of RFC 4254 section 6.
type (
	ptyRequestMsg struct {
		Term                       string
		Columns, Rows, Width, High uint32
		Modes                      string
	}
	windowChangeMsg struct{ Columns, Rows, Width, High uint32 }
	envMsg          struct{ Name, Value string }
	execMsg         struct{ Command string }
	subsystemMsg    struct{ Name string }
	signalMsg       struct{ Signal string }
	exitStatusMsg   struct{ Status uint32 }
	exitSignalMsg   struct {
		Signal     string
		CoreDumped bool
		Error      string
		Lang       string
	}
)

type session struct {
	c   *conn
	ch  ssh.Channel
	env []string
	pty *ptyRequestMsg

	mu      sync.Mutex
	cmd     *exec.Cmd
	ptmx    *os.File
	started bool
	exited  bool
}

func (c *conn) handleSession(nch ssh.NewChannel) {
	ch, reqs, err := nch.Accept()
	if err != nil {
		return
	}
	s := &session{c: c, ch: ch}
	for req := range reqs {
		s.handle(req)
	}
	// The client closed the channel or the connection dropped: hang up
	// whatever still runs, as sshd does.
	s.hangup()
}

func (s *session) handle(req *ssh.Request) {
	reply := func(ok bool) {
		if req.WantReply {
			req.Reply(ok, nil)
		}
	}
	switch req.Type {
	case "env":
		var m envMsg
		if ssh.Unmarshal(req.Payload, &m) != nil || m.Name == "" || strings.Contains(m.Name, "=") {
			reply(false)
			return
		}
		s.env = append(s.env, m.Name+"="+m.Value)
		reply(true)
	case "pty-req":
		var m ptyRequestMsg
		if ssh.Unmarshal(req.Payload, &m) != nil || s.isStarted() {
			reply(false)
			return
		}
		s.pty = &m
		reply(true)
	case "window-change":
		var m windowChangeMsg
		if ssh.Unmarshal(req.Payload, &m) != nil {
			return
		}
		if s.pty != nil {
			s.pty.Columns, s.pty.Rows = m.Columns, m.Rows
		}
		s.mu.Lock()
		if s.ptmx != nil {
			setWinsize(s.ptmx, m.Columns, m.Rows, m.Width, m.High)
		}
		s.mu.Unlock()
	case "shell", "exec":
		var m execMsg
		if req.Type == "exec" && ssh.Unmarshal(req.Payload, &m) != nil {
			reply(false)
			return
		}
		if !s.markStarted() {
			reply(false)
			return
		}
		// Reply before starting: a command that exits at once would
		// otherwise close the channel before the client saw the reply.
		reply(true)
		s.run(m.Command)
	case "subsystem":
		var m subsystemMsg
		if ssh.Unmarshal(req.Payload, &m) != nil || m.Name != "sftp" || !s.markStarted() {
			reply(false)
			return
		}
		reply(true)
		go s.serveSFTP()
	case "signal":
		var m signalMsg
		if ssh.Unmarshal(req.Payload, &m) == nil {
			s.signal(m.Signal)
		}
		reply(true)
	default: // x11-req, auth-agent-req@openssh.com, ...
		reply(false)
	}
}

func (s *session) isStarted() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.started
}

// markStarted allows one program per session, as RFC 4254 requires.
func (s *session) markStarted() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.started {
		return false
	}
	s.started = true
	return true
}

// environ is the container's environment plus what sshd would add and
// what the client asked for (later entries win in exec.Cmd).
func (s *session) environ() []string {
	env := append([]string{}, s.c.srv.cfg.Env...)
	if !hasVar(env, "SHELL") {
		env = append(env, "SHELL="+s.c.srv.cfg.Shell)
	}
	if ra, ok := s.c.ssh.RemoteAddr().(*net.TCPAddr); ok {
		if la, ok := s.c.ssh.LocalAddr().(*net.TCPAddr); ok {
			env = append(env,
				fmt.Sprintf("SSH_CONNECTION=%s %d %s %d", ra.IP, ra.Port, la.IP, la.Port),
				fmt.Sprintf("SSH_CLIENT=%s %d %d", ra.IP, ra.Port, la.Port))
		}
	}
	if s.pty != nil && s.pty.Term != "" {
		env = append(env, "TERM="+s.pty.Term)
	}
	return append(env, s.env...)
}

func hasVar(env []string, name string) bool {
	for _, kv := range env {
		if strings.HasPrefix(kv, name+"=") {
			return true
		}
	}
	return false
}

// run starts the user's shell (command == "") or `$SHELL -c command`.
func (s *session) run(command string) {
	shell := s.c.srv.cfg.Shell
	cmd := exec.Command(shell)
	if command != "" {
		cmd = exec.Command(shell, "-c", command)
	}
	cmd.Dir = s.c.srv.cfg.Dir
	cmd.Env = s.environ()

	var outDone chan struct{}
	if s.pty != nil {
		ptmx, err := startPTY(cmd, s.pty.Columns, s.pty.Rows)
		if err != nil {
			s.fail(err)
			return
		}
		s.mu.Lock()
		s.cmd, s.ptmx = cmd, ptmx
		s.mu.Unlock()
		go io.Copy(ptmx, s.ch)
		outDone = make(chan struct{})
		go func() {
			io.Copy(s.ch, ptmx) // ends with EIO once the terminal has no users
			close(outDone)
		}()
	} else {
		// Own process group, so a signal request reaches the command's
		// children too, not just the shell.
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		cmd.Stdout = s.ch
		cmd.Stderr = s.ch.Stderr()
		// A background process that keeps stdout open must not hold the
		// session open for ever after the command itself exited.
		cmd.WaitDelay = time.Second
		stdin, err := cmd.StdinPipe()
		if err != nil {
			s.fail(err)
			return
		}
		if err := cmd.Start(); err != nil {
			s.fail(err)
			return
		}
		s.mu.Lock()
		s.cmd = cmd
		s.mu.Unlock()
		go func() {
			io.Copy(stdin, s.ch)
			stdin.Close() // the client's EOF becomes the command's EOF
		}()
	}
	go s.wait(outDone)
}

// fail reports a program that could not start like a shell would.
func (s *session) fail(err error) {
	fmt.Fprintf(s.ch.Stderr(), "devtool-agent: %v\r\n", err)
	s.exit(exitStatusMsg{Status: 127}, nil)
}

func (s *session) wait(outDone chan struct{}) {
	err := s.cmd.Wait()
	if outDone != nil {
		// Let the terminal's remaining output drain, but not for ever.
		select {
		case <-outDone:
		case <-time.After(500 * time.Millisecond):
		}
	}
	s.mu.Lock()
	s.exited = true
	if s.ptmx != nil {
		s.ptmx.Close()
	}
	s.mu.Unlock()

	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) && !errors.Is(err, exec.ErrWaitDelay) {
		s.c.srv.cfg.Logf("wait: %v", err)
	}
	ws, _ := s.cmd.ProcessState.Sys().(syscall.WaitStatus)
	if ws.Signaled() {
		s.exit(nil, &exitSignalMsg{
			Signal:     strings.TrimPrefix(unix.SignalName(ws.Signal()), "SIG"),
			CoreDumped: ws.CoreDump(),
		})
		return
	}
	s.exit(exitStatusMsg{Status: uint32(ws.ExitStatus())}, nil)
}

// exit sends the exit status (or signal), then EOF, and closes the channel:
// OpenSSH's order. The status must go first: a client whose input has
// ended closes the channel as soon as it reads our EOF (the CLI's ssh2
// does), and a status sent after its close arrived is never sent at all.
// With the EOF first, an agent delayed between the two (a busy machine)
// lost the status of a command that had run.
func (s *session) exit(status any, sig *exitSignalMsg) {
	if sig != nil {
		s.ch.SendRequest("exit-signal", false, ssh.Marshal(sig))
	} else {
		s.ch.SendRequest("exit-status", false, ssh.Marshal(status))
	}
	s.ch.CloseWrite()
	s.ch.Close()
}

func (s *session) signal(name string) {
	sig := unix.SignalNum("SIG" + name)
	if sig == 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil || s.cmd.Process == nil || s.exited {
		return
	}
	pgrp := s.cmd.Process.Pid // leader of its own group or session
	if s.ptmx != nil {
		if fg, err := foregroundPgrp(s.ptmx); err == nil && fg > 0 {
			pgrp = fg
		}
	}
	syscall.Kill(-pgrp, sig)
}

func (s *session) hangup() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil || s.cmd.Process == nil || s.exited {
		return
	}
	if s.ptmx != nil {
		s.ptmx.Close() // the kernel sends SIGHUP to the session
	}
	syscall.Kill(-s.cmd.Process.Pid, syscall.SIGHUP)
}

// serveSFTP serves the sftp subsystem (scp -s, sftp, IDE remote file
// browsers) relative to the container's working directory.
func (s *session) serveSFTP() {
	srv, err := sftp.NewServer(s.ch, sftp.WithServerWorkingDirectory(s.c.srv.cfg.Dir))
	if err != nil {
		s.fail(err)
		return
	}
	status := uint32(0)
	if err := srv.Serve(); err != nil && !errors.Is(err, io.EOF) {
		s.c.srv.cfg.Logf("sftp: %v", err)
		status = 1
	}
	srv.Close()
	s.exit(exitStatusMsg{Status: status}, nil)
}
