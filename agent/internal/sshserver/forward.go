package sshserver

import (
	"io"
	"net"
	"strconv"
	"sync"
	"time"

	"golang.org/x/crypto/ssh"
)

// Payloads of RFC 4254 section 7.

type directTCPIPMsg struct {
	Host     string
	Port     uint32
	OrigHost string
	OrigPort uint32
}

type tcpipForwardMsg struct {
	Host string
	Port uint32
}

type forwardedTCPIPMsg struct {
	Host     string // the address as the client requested it
	Port     uint32 // the port actually bound
	OrigHost string
	OrigPort uint32
}

// handleDirectTCPIP is local forwarding (ssh -L): dial from inside the
// container. Any destination is allowed: the client can run arbitrary
// commands here anyway, so restricting targets would add no security.
func (c *conn) handleDirectTCPIP(nch ssh.NewChannel) {
	var m directTCPIPMsg
	if err := ssh.Unmarshal(nch.ExtraData(), &m); err != nil {
		nch.Reject(ssh.Prohibited, "malformed direct-tcpip request")
		return
	}
	addr := net.JoinHostPort(m.Host, strconv.Itoa(int(m.Port)))
	tc, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		nch.Reject(ssh.ConnectionFailed, err.Error())
		return
	}
	ch, reqs, err := nch.Accept()
	if err != nil {
		tc.Close()
		return
	}
	go ssh.DiscardRequests(reqs)
	pipe(ch, tc)
}

// listenHost maps an OpenSSH-style bind address to a listen host.
func listenHost(h string) string {
	switch h {
	case "", "*":
		return "" // all interfaces, both families
	case "localhost":
		// Loopback only, and deterministic: "localhost" could resolve to
		// ::1 first and the app would then miss an IPv4 connect.
		return "127.0.0.1"
	}
	return h
}

// handleTCPIPForward is remote forwarding (ssh -R): listen in the
// container and hand each connection back to the client.
func (c *conn) handleTCPIPForward(req *ssh.Request) {
	var m tcpipForwardMsg
	if err := ssh.Unmarshal(req.Payload, &m); err != nil || m.Port > 65535 {
		req.Reply(false, nil)
		return
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(listenHost(m.Host), strconv.Itoa(int(m.Port))))
	if err != nil {
		c.srv.cfg.Logf("tcpip-forward %s:%d: %v", m.Host, m.Port, err)
		req.Reply(false, nil)
		return
	}
	port := uint32(ln.Addr().(*net.TCPAddr).Port)
	// The client matches forwarded-tcpip channels, and its cancel request,
	// on the host string it sent and the bound port.
	key := net.JoinHostPort(m.Host, strconv.Itoa(int(port)))
	c.mu.Lock()
	if old, ok := c.fwds[key]; ok {
		old.Close()
	}
	c.fwds[key] = ln
	c.mu.Unlock()

	var reply []byte
	if m.Port == 0 {
		reply = ssh.Marshal(struct{ Port uint32 }{port})
	}
	req.Reply(true, reply)
	go c.acceptForwarded(ln, m.Host, port)
}

func (c *conn) acceptForwarded(ln net.Listener, host string, port uint32) {
	for {
		tc, err := ln.Accept()
		if err != nil {
			return // closed by cancel-tcpip-forward or the connection's end
		}
		go func() {
			m := forwardedTCPIPMsg{Host: host, Port: port}
			if ra, ok := tc.RemoteAddr().(*net.TCPAddr); ok {
				m.OrigHost, m.OrigPort = ra.IP.String(), uint32(ra.Port)
			}
			ch, reqs, err := c.ssh.OpenChannel("forwarded-tcpip", ssh.Marshal(&m))
			if err != nil {
				tc.Close()
				return
			}
			go ssh.DiscardRequests(reqs)
			pipe(ch, tc)
		}()
	}
}

func (c *conn) handleCancelTCPIPForward(req *ssh.Request) {
	var m tcpipForwardMsg
	if err := ssh.Unmarshal(req.Payload, &m); err != nil {
		req.Reply(false, nil)
		return
	}
	key := net.JoinHostPort(m.Host, strconv.Itoa(int(m.Port)))
	c.mu.Lock()
	ln, ok := c.fwds[key]
	delete(c.fwds, key)
	c.mu.Unlock()
	if ok {
		ln.Close()
	}
	req.Reply(ok, nil)
}

func (c *conn) closeForwards() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, ln := range c.fwds {
		ln.Close()
		delete(c.fwds, k)
	}
}

// pipe copies both ways between a channel and a TCP connection,
// propagating half-closes (EOF) so request/response protocols that shut
// down their write side still get their answer.
func pipe(ch ssh.Channel, tc net.Conn) {
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		_, err := io.Copy(tc, ch)
		if cw, ok := tc.(interface{ CloseWrite() error }); ok && err == nil {
			cw.CloseWrite()
		} else {
			tc.Close()
		}
	}()
	go func() {
		defer wg.Done()
		_, err := io.Copy(ch, tc)
		ch.CloseWrite()
		if err != nil {
			ch.Close()
		}
	}()
	wg.Wait()
	ch.Close()
	tc.Close()
}
