package sshserver

import (
	"net"
	"sync/atomic"
	"testing"
)

// freezingProxy forwards one TCP connection to target until freeze(),
// after which it drops everything the client sends, like a port-forward
// whose far end died without a FIN. serverClosed is closed when the
// server hangs up on it.
type freezingProxy struct {
	addr         string
	frozen       atomic.Bool
	serverClosed chan struct{}
}

func newFreezingProxy(t *testing.T, target string) *freezingProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	p := &freezingProxy{addr: ln.Addr().String(), serverClosed: make(chan struct{})}
	go func() {
		client, err := ln.Accept()
		if err != nil {
			return
		}
		server, err := net.Dial("tcp", target)
		if err != nil {
			client.Close()
			return
		}
		go func() { // client -> server, dropped once frozen
			buf := make([]byte, 32<<10)
			for {
				n, err := client.Read(buf)
				if n > 0 && !p.frozen.Load() {
					server.Write(buf[:n])
				}
				if err != nil {
					return
				}
			}
		}()
		go func() { // server -> client, until the server closes
			buf := make([]byte, 32<<10)
			for {
				n, err := server.Read(buf)
				if n > 0 && !p.frozen.Load() {
					client.Write(buf[:n])
				}
				if err != nil {
					close(p.serverClosed)
					client.Close()
					return
				}
			}
		}()
	}()
	return p
}

func (p *freezingProxy) freeze() { p.frozen.Store(true) }
