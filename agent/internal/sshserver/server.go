// Package sshserver is the dev container's SSH server: public-key auth
// only, sessions (exec, shell, PTY, env, signals, sftp) and TCP forwarding
// both ways. The CLI reaches it through a Kubernetes port-forward and
// multiplexes everything over one connection: its shell and exec, the
// Syncthing API and sync ports (direct-tcpip), and reverse forwards
// (tcpip-forward). It needs no privileges: every session runs as the
// container's user, in the container's working directory and environment.
package sshserver

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"sync"
	"time"

	"golang.org/x/crypto/ssh"
)

// Config configures a Server.
type Config struct {
	HostKey        ssh.Signer
	AuthorizedKeys []ssh.PublicKey
	// KeepaliveInterval is how often an open connection is probed; after
	// KeepaliveCount intervals without an answer it is dropped, so a dead
	// port-forward does not leave sessions and listeners behind.
	KeepaliveInterval time.Duration
	KeepaliveCount    int
	// Dir and Env are the sessions' working directory and base
	// environment (default: the server's own).
	Dir string
	Env []string
	// Shell is the login shell; default $SHELL, then /bin/bash, /bin/sh.
	Shell string
	Logf  func(format string, args ...any)
}

// Server is an SSH server. Serve may be called for several listeners.
type Server struct {
	cfg    Config
	sshCfg *ssh.ServerConfig

	handlers sync.WaitGroup // connections and sessions, for Close

	mu        sync.Mutex
	listeners map[net.Listener]struct{}
	conns     map[*ssh.ServerConn]struct{}
	closed    bool
}

// ParseAuthorizedKeys parses authorized_keys lines (options are not
// supported and rejected, so nothing silently widens access).
func ParseAuthorizedKeys(lines []string) ([]ssh.PublicKey, error) {
	var keys []ssh.PublicKey
	for i, l := range lines {
		k, _, options, rest, err := ssh.ParseAuthorizedKey([]byte(l))
		if err != nil {
			return nil, fmt.Errorf("authorized key %d: %w", i, err)
		}
		if len(options) > 0 {
			return nil, fmt.Errorf("authorized key %d: options %q are not supported", i, options)
		}
		if len(bytes.TrimSpace(rest)) > 0 {
			return nil, fmt.Errorf("authorized key %d: one key per entry", i)
		}
		keys = append(keys, k)
	}
	return keys, nil
}

// New checks cfg and returns a Server.
func New(cfg Config) (*Server, error) {
	if cfg.HostKey == nil {
		return nil, errors.New("sshserver: no host key")
	}
	if len(cfg.AuthorizedKeys) == 0 {
		return nil, errors.New("sshserver: no authorized keys")
	}
	if cfg.KeepaliveInterval == 0 {
		cfg.KeepaliveInterval = 15 * time.Second
	}
	if cfg.KeepaliveCount == 0 {
		cfg.KeepaliveCount = 3
	}
	if cfg.Dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return nil, err
		}
		cfg.Dir = wd
	}
	if cfg.Env == nil {
		cfg.Env = os.Environ()
	}
	if cfg.Shell == "" {
		cfg.Shell = DefaultShell()
	}
	if cfg.Logf == nil {
		cfg.Logf = func(string, ...any) {}
	}
	s := &Server{
		cfg:       cfg,
		listeners: map[net.Listener]struct{}{},
		conns:     map[*ssh.ServerConn]struct{}{},
	}
	s.sshCfg = &ssh.ServerConfig{
		ServerVersion:     "SSH-2.0-devtool-agent",
		PublicKeyCallback: s.checkKey,
		// No password or keyboard-interactive callbacks: key auth only.
	}
	s.sshCfg.AddHostKey(cfg.HostKey)
	return s, nil
}

// DefaultShell is the login shell when none is configured: $SHELL if it exists, then /bin/bash, /bin/sh.
func DefaultShell() string {
	if sh := os.Getenv("SHELL"); sh != "" {
		if _, err := os.Stat(sh); err == nil {
			return sh
		}
	}
	for _, sh := range []string{"/bin/bash", "/bin/sh"} {
		if _, err := os.Stat(sh); err == nil {
			return sh
		}
	}
	return "/bin/sh"
}

func (s *Server) checkKey(meta ssh.ConnMetadata, key ssh.PublicKey) (*ssh.Permissions, error) {
	offered := key.Marshal()
	for _, k := range s.cfg.AuthorizedKeys {
		if bytes.Equal(k.Marshal(), offered) {
			return &ssh.Permissions{Extensions: map[string]string{"pubkey-fp": ssh.FingerprintSHA256(key)}}, nil
		}
	}
	return nil, fmt.Errorf("unknown public key %s", ssh.FingerprintSHA256(key))
}

// Serve accepts connections on l until Close.
func (s *Server) Serve(l net.Listener) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return net.ErrClosed
	}
	s.listeners[l] = struct{}{}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.listeners, l)
		s.mu.Unlock()
	}()
	for {
		nc, err := l.Accept()
		if err != nil {
			s.mu.Lock()
			closed := s.closed
			s.mu.Unlock()
			if closed {
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				time.Sleep(50 * time.Millisecond)
				continue
			}
			return err
		}
		// Add under the lock Close takes before it Waits.
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			nc.Close()
			return nil
		}
		s.handlers.Add(1)
		s.mu.Unlock()
		go func() {
			defer s.handlers.Done()
			s.handleConn(nc)
		}()
	}
}

// Close stops accepting and drops every connection, which hangs up their
// sessions' processes (SIGHUP, as sshd does). It waits briefly for that to
// happen, so a server process that exits right after Close has delivered
// the hangups first.
func (s *Server) Close() error {
	s.mu.Lock()
	s.closed = true
	for l := range s.listeners {
		l.Close()
	}
	for c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	done := make(chan struct{})
	go func() { s.handlers.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(2 * time.Second):
	}
	return nil
}

// conn is the per-connection state: its reverse-forward listeners.
type conn struct {
	srv  *Server
	ssh  *ssh.ServerConn
	mu   sync.Mutex
	fwds map[string]net.Listener // "host:port" as requested -> listener
}

func (s *Server) handleConn(nc net.Conn) {
	// A client that never finishes the handshake must not pin a goroutine.
	nc.SetDeadline(time.Now().Add(30 * time.Second))
	sc, chans, reqs, err := ssh.NewServerConn(nc, s.sshCfg)
	if err != nil {
		s.cfg.Logf("handshake from %s: %v", nc.RemoteAddr(), err)
		nc.Close()
		return
	}
	nc.SetDeadline(time.Time{})
	s.cfg.Logf("login from %s (%s, key %s)", sc.RemoteAddr(), sc.ClientVersion(), sc.Permissions.Extensions["pubkey-fp"])

	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		sc.Close()
		return
	}
	s.conns[sc] = struct{}{}
	s.mu.Unlock()

	c := &conn{srv: s, ssh: sc, fwds: map[string]net.Listener{}}
	done := make(chan struct{})
	go c.handleGlobalRequests(reqs)
	go c.keepalive(done)
	for nch := range chans {
		switch nch.ChannelType() {
		case "session":
			s.handlers.Add(1)
			go func() {
				defer s.handlers.Done()
				c.handleSession(nch)
			}()
		case "direct-tcpip":
			go c.handleDirectTCPIP(nch)
		default:
			nch.Reject(ssh.UnknownChannelType, "unsupported channel type "+nch.ChannelType())
		}
	}
	// The channel stream ends when the connection does.
	close(done)
	sc.Wait()
	c.closeForwards()
	s.mu.Lock()
	delete(s.conns, sc)
	s.mu.Unlock()
	s.cfg.Logf("connection from %s closed", sc.RemoteAddr())
}

func (c *conn) handleGlobalRequests(reqs <-chan *ssh.Request) {
	for req := range reqs {
		switch req.Type {
		case "tcpip-forward":
			c.handleTCPIPForward(req)
		case "cancel-tcpip-forward":
			c.handleCancelTCPIPForward(req)
		default:
			// Includes keepalive@openssh.com: a "failure" reply is what
			// OpenSSH sends too, and all a keepalive needs is an answer.
			if req.WantReply {
				req.Reply(false, nil)
			}
		}
	}
}

// keepalive probes the client; a connection whose far end vanished (for
// example a killed port-forward) is closed after a few silent intervals.
func (c *conn) keepalive(done <-chan struct{}) {
	interval := c.srv.cfg.KeepaliveInterval
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-done:
			return
		case <-t.C:
		}
		replied := make(chan error, 1)
		go func() {
			_, _, err := c.ssh.SendRequest("keepalive@openssh.com", true, nil)
			replied <- err
		}()
		select {
		case <-done:
			return
		case err := <-replied:
			if err != nil {
				c.ssh.Close()
				return
			}
		case <-time.After(interval * time.Duration(c.srv.cfg.KeepaliveCount)):
			c.srv.cfg.Logf("%s: no keepalive reply, closing", c.ssh.RemoteAddr())
			c.ssh.Close()
			return
		}
	}
}
