package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"regexp"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"
)

// The line the service writes right after the TLS handshake, before the
// client's first byte: "devtool-tenant NAME\n". The service writes the
// name of the user it authenticated; the user's client never chooses it.
const prefacePrefix = "devtool-tenant "

const maxPreface = len(prefacePrefix) + 64

var tenantName = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$`)

// parsePreface returns the tenant of one preface line (without its "\n").
func parsePreface(line string) (string, error) {
	name, ok := strings.CutPrefix(line, prefacePrefix)
	if !ok {
		return "", fmt.Errorf("the connection does not start with %q", prefacePrefix)
	}
	if !tenantName.MatchString(name) {
		return "", fmt.Errorf("%q is not a tenant name", name)
	}
	return name, nil
}

// readPreface reads the preface one byte at a time, so that nothing of
// the gRPC bytes after it is consumed.
func readPreface(conn net.Conn) (string, error) {
	line := make([]byte, 0, maxPreface)
	b := make([]byte, 1)
	for {
		if _, err := conn.Read(b); err != nil {
			return "", fmt.Errorf("reading the tenant preface: %w", err)
		}
		if b[0] == '\n' {
			return parsePreface(string(line))
		}
		if len(line) == maxPreface {
			return "", fmt.Errorf("the tenant preface is longer than %d bytes", maxPreface)
		}
		line = append(line, b[0])
	}
}

// tenantInfo is the handshake's result: the TLS state and the tenant.
type tenantInfo struct {
	credentials.TLSInfo
	tenant string
}

// tenantCredentials terminates the mutual TLS (only the service's client
// certificate is accepted) and then reads the tenant preface.
type tenantCredentials struct {
	credentials.TransportCredentials
	prefaceTimeout time.Duration
}

func newTenantCredentials(config *tls.Config) credentials.TransportCredentials {
	return &tenantCredentials{TransportCredentials: credentials.NewTLS(config), prefaceTimeout: 10 * time.Second}
}

func (c *tenantCredentials) ServerHandshake(raw net.Conn) (net.Conn, credentials.AuthInfo, error) {
	conn, auth, err := c.TransportCredentials.ServerHandshake(raw)
	if err != nil {
		return nil, nil, err
	}
	_ = conn.SetReadDeadline(time.Now().Add(c.prefaceTimeout))
	tenant, err := readPreface(conn)
	if err != nil {
		conn.Close()
		return nil, nil, err
	}
	_ = conn.SetReadDeadline(time.Time{})
	return conn, tenantInfo{TLSInfo: auth.(credentials.TLSInfo), tenant: tenant}, nil
}

func (c *tenantCredentials) Clone() credentials.TransportCredentials {
	return &tenantCredentials{TransportCredentials: c.TransportCredentials.Clone(), prefaceTimeout: c.prefaceTimeout}
}

// tenantOf is the tenant of the connection a call arrived on.
func tenantOf(ctx context.Context) (string, error) {
	if p, ok := peer.FromContext(ctx); ok {
		if info, ok := p.AuthInfo.(tenantInfo); ok {
			return info.tenant, nil
		}
	}
	return "", status.Error(codes.Unauthenticated, "no tenant on this connection")
}
