package sshserver

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pkg/sftp"
	"golang.org/x/crypto/ssh"

	"devtool.dev/agent/internal/testutil"
)

type fixture struct {
	addr    string
	dir     string
	hostKey ssh.PublicKey
	client  ssh.Signer
	srv     *Server
}

func newSigner(t *testing.T) ssh.Signer {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	s, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// startServer runs a real server on a loopback port.
func startServer(t *testing.T, tweak func(*Config)) *fixture {
	t.Helper()
	host, client := newSigner(t), newSigner(t)
	dir := t.TempDir()
	cfg := Config{
		HostKey:        host,
		AuthorizedKeys: []ssh.PublicKey{client.PublicKey()},
		Dir:            dir,
		Env:            []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "CONTAINER_VAR=from-container"},
		Shell:          "/bin/sh",
		Logf:           t.Logf,
	}
	if tweak != nil {
		tweak(&cfg)
	}
	srv, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return &fixture{addr: ln.Addr().String(), dir: dir, hostKey: host.PublicKey(), client: client, srv: srv}
}

func (f *fixture) dial(t *testing.T, signer ssh.Signer) (*ssh.Client, error) {
	t.Helper()
	return ssh.Dial("tcp", f.addr, &ssh.ClientConfig{
		User:            "dev",
		Auth:            []ssh.AuthMethod{ssh.PublicKeys(signer)},
		HostKeyCallback: ssh.FixedHostKey(f.hostKey), // the CLI pins it too
		Timeout:         5 * time.Second,
	})
}

func (f *fixture) connect(t *testing.T) *ssh.Client {
	t.Helper()
	c, err := f.dial(t, f.client)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func TestAuthentication(t *testing.T) {
	f := startServer(t, nil)
	f.connect(t)

	if _, err := f.dial(t, newSigner(t)); err == nil || !strings.Contains(err.Error(), "unable to authenticate") {
		t.Fatalf("unknown key: want auth failure, got %v", err)
	}
	_, err := ssh.Dial("tcp", f.addr, &ssh.ClientConfig{
		User: "dev", Auth: []ssh.AuthMethod{ssh.Password("x")},
		HostKeyCallback: ssh.FixedHostKey(f.hostKey), Timeout: 5 * time.Second,
	})
	if err == nil {
		t.Fatal("password auth accepted")
	}
	_, err = ssh.Dial("tcp", f.addr, &ssh.ClientConfig{
		User: "dev", Auth: []ssh.AuthMethod{ssh.PublicKeys(f.client)},
		HostKeyCallback: ssh.FixedHostKey(newSigner(t).PublicKey()), Timeout: 5 * time.Second,
	})
	if err == nil {
		t.Fatal("client accepted a host key other than the pinned one")
	}
}

func TestExec(t *testing.T) {
	f := startServer(t, nil)
	c := f.connect(t)

	s, _ := c.NewSession()
	var stdout, stderr bytes.Buffer
	s.Stdout, s.Stderr = &stdout, &stderr
	if err := s.Setenv("GREETING", "hi there"); err != nil {
		t.Fatal(err)
	}
	err := s.Run(`echo "$GREETING from $(pwd) $CONTAINER_VAR"; echo oops >&2; test -t 0 || echo no-tty; exit 3`)
	var ee *ssh.ExitError
	if !errors.As(err, &ee) || ee.ExitStatus() != 3 {
		t.Fatalf("want exit status 3, got %v", err)
	}
	want := "hi there from " + f.dir + " from-container\nno-tty\n"
	if stdout.String() != want || stderr.String() != "oops\n" {
		t.Fatalf("stdout %q (want %q), stderr %q", stdout.String(), want, stderr.String())
	}

	// Stdin is streamed and the client's EOF reaches the command.
	s, _ = c.NewSession()
	s.Stdin = strings.NewReader("line1\nline2\n")
	out, err := s.Output("wc -l")
	if err != nil || strings.TrimSpace(string(out)) != "2" {
		t.Fatalf("wc -l: %q, %v", out, err)
	}

	// `shell` without a PTY reads commands from stdin.
	s, _ = c.NewSession()
	s.Stdin = strings.NewReader("echo from-shell\nexit 7\n")
	var shellOut bytes.Buffer
	s.Stdout = &shellOut
	if err := s.Shell(); err != nil {
		t.Fatal(err)
	}
	if err := s.Wait(); !errors.As(err, &ee) || ee.ExitStatus() != 7 || shellOut.String() != "from-shell\n" {
		t.Fatalf("shell: %q, %v", shellOut.String(), err)
	}
}

// A client whose input has ended closes the channel as soon as it reads
// the server's EOF (the CLI's ssh2 does): the exit status must be there
// before that EOF, whatever the timing.
func TestExitStatusBeforeEOF(t *testing.T) {
	f := startServer(t, nil)
	c := f.connect(t)
	for i := 0; i < 20; i++ {
		ch, reqs, err := c.OpenChannel("session", nil)
		if err != nil {
			t.Fatal(err)
		}
		if ok, err := ch.SendRequest("exec", true, ssh.Marshal(execMsg{Command: "exit 5"})); !ok || err != nil {
			t.Fatalf("exec: %v %v", ok, err)
		}
		ch.CloseWrite()
		// The client's mux queues a request before it delivers a later EOF.
		if _, err := io.Copy(io.Discard, ch); err != nil {
			t.Fatal(err)
		}
		select {
		case req := <-reqs:
			var m exitStatusMsg
			if req.Type != "exit-status" || ssh.Unmarshal(req.Payload, &m) != nil || m.Status != 5 {
				t.Fatalf("run %d: want exit-status 5 first, got %s %v", i, req.Type, req.Payload)
			}
		default:
			t.Fatalf("run %d: EOF came before the exit status", i)
		}
		ch.Close()
	}
}

func TestSignals(t *testing.T) {
	f := startServer(t, nil)
	c := f.connect(t)

	s, _ := c.NewSession()
	stdout, _ := s.StdoutPipe()
	if err := s.Start(`trap 'exit 42' TERM; echo ready; while :; do sleep 0.05; done`); err != nil {
		t.Fatal(err)
	}
	line := make([]byte, 6)
	if _, err := io.ReadFull(stdout, line); err != nil {
		t.Fatal(err)
	}
	s.Signal(ssh.SIGTERM)
	var ee *ssh.ExitError
	if err := s.Wait(); !errors.As(err, &ee) || ee.ExitStatus() != 42 {
		t.Fatalf("want exit 42 from the TERM trap, got %v", err)
	}

	s, _ = c.NewSession()
	if err := s.Start(`exec sleep 30`); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	s.Signal(ssh.SIGKILL)
	if err := s.Wait(); !errors.As(err, &ee) || ee.Signal() != "KILL" {
		t.Fatalf("want exit-signal KILL, got %v", err)
	}
}

func TestPTY(t *testing.T) {
	f := startServer(t, nil)
	c := f.connect(t)
	s, _ := c.NewSession()
	var out testutil.SafeBuffer
	s.Stdout = &out
	stdin, _ := s.StdinPipe()
	if err := s.RequestPty("xterm-256color", 40, 100, ssh.TerminalModes{ssh.ECHO: 0}); err != nil {
		t.Fatal(err)
	}
	err := s.Start(`test -t 0 && echo "is-a-tty $TERM"; stty size; read x; stty size`)
	if err != nil {
		t.Fatal(err)
	}
	waitFor := func(sub string) {
		testutil.Eventually(t, 5*time.Second, "output "+sub, func() error {
			if !strings.Contains(out.String(), sub) {
				return errors.New(out.String())
			}
			return nil
		})
	}
	waitFor("is-a-tty xterm-256color")
	waitFor("40 100")
	if err := s.WindowChange(50, 120); err != nil {
		t.Fatal(err)
	}
	// window-change has no reply; give it a moment before waking `read`.
	time.Sleep(100 * time.Millisecond)
	stdin.Write([]byte("\n"))
	waitFor("50 120")
	if err := s.Wait(); err != nil {
		t.Fatalf("exit: %v (output %q)", err, out.String())
	}
}

// echoServer accepts connections, reads until EOF, then answers with
// what it read: it only answers if the half-close got through.
func echoServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				data, _ := io.ReadAll(c)
				c.Write(append([]byte("echo:"), data...))
			}()
		}
	}()
	return ln.Addr().String()
}

func roundTrip(t *testing.T, c net.Conn, msg string) string {
	t.Helper()
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Write([]byte(msg)); err != nil {
		t.Fatal(err)
	}
	if err := c.(interface{ CloseWrite() error }).CloseWrite(); err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(c)
	if err != nil {
		t.Fatal(err)
	}
	return string(got)
}

func TestDirectTCPIP(t *testing.T) {
	f := startServer(t, nil)
	c := f.connect(t)
	target := echoServer(t)
	for i := 0; i < 3; i++ { // several channels over one connection
		conn, err := c.Dial("tcp", target)
		if err != nil {
			t.Fatal(err)
		}
		if got := roundTrip(t, conn, "ping"); got != "echo:ping" {
			t.Fatalf("got %q", got)
		}
	}
	if _, err := c.Dial("tcp", "127.0.0.1:1"); err == nil {
		t.Fatal("dial to a closed port succeeded")
	}
}

func TestTCPIPForward(t *testing.T) {
	f := startServer(t, nil)
	c := f.connect(t)
	// Remote (reverse) forward with a server-chosen port: the server
	// listens, and connections made there come back to this client.
	ln, err := c.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	if port == 0 {
		t.Fatal("server did not report the bound port")
	}
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer conn.Close()
				data, _ := io.ReadAll(conn)
				conn.Write(append([]byte("local:"), data...))
			}()
		}
	}()
	// This dial plays the app inside the container.
	conn, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	if got := roundTrip(t, conn, "hello"); got != "local:hello" {
		t.Fatalf("got %q", got)
	}
	// cancel-tcpip-forward closes the server's listener.
	ln.Close()
	testutil.Eventually(t, 3*time.Second, "listener closed", func() error {
		conn, err := net.Dial("tcp", ln.Addr().String())
		if err == nil {
			conn.Close()
			return errors.New("still listening")
		}
		return nil
	})

	// A fixed port works too, and the listener goes with the connection.
	fixed := testutil.FreePort(t)
	ln2, err := c.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(fixed)))
	if err != nil {
		t.Fatal(err)
	}
	_ = ln2
	c.Close()
	testutil.Eventually(t, 3*time.Second, "listener closed with the connection", func() error {
		conn, err := net.Dial("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(fixed)))
		if err == nil {
			conn.Close()
			return errors.New("still listening")
		}
		return nil
	})
}

func TestSFTP(t *testing.T) {
	f := startServer(t, nil)
	c := f.connect(t)
	sc, err := sftp.NewClient(c)
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	w, err := sc.Create("uploaded.txt") // relative to the working directory
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte("via sftp"))
	w.Close()
	data, err := os.ReadFile(filepath.Join(f.dir, "uploaded.txt"))
	if err != nil || string(data) != "via sftp" {
		t.Fatalf("read back %q, %v", data, err)
	}
}

func TestKeepalive(t *testing.T) {
	f := startServer(t, func(c *Config) {
		c.KeepaliveInterval = 100 * time.Millisecond
		c.KeepaliveCount = 2
	})
	// The client's own keepalive gets an answer.
	c := f.connect(t)
	if _, _, err := c.SendRequest("keepalive@openssh.com", true, nil); err != nil {
		t.Fatal(err)
	}

	// A client that goes silent (a dead port-forward) is dropped: put a
	// proxy in between and freeze it.
	p := newFreezingProxy(t, f.addr)
	f2 := *f
	f2.addr = p.addr
	c2 := f2.connect(t)
	if _, _, err := c2.SendRequest("keepalive@openssh.com", true, nil); err != nil {
		t.Fatal(err)
	}
	p.freeze()
	select {
	case <-p.serverClosed:
	case <-time.After(3 * time.Second):
		t.Fatal("server kept a silent connection open")
	}
}
