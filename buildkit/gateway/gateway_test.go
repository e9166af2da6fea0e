package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

func TestAllowedIsTheBuildsMethodsOnly(t *testing.T) {
	for _, m := range []string{"Info", "ListWorkers", "Solve", "Status", "Session"} {
		if !allowed("/moby.buildkit.v1.Control/" + m) {
			t.Errorf("%s refused", m)
		}
	}
	for _, m := range []string{
		"/moby.buildkit.v1.Control/Prune", "/moby.buildkit.v1.Control/DiskUsage",
		"/moby.buildkit.v1.Control/ListenBuildHistory", "/moby.buildkit.v1.Control/UpdateBuildHistory",
		"/moby.buildkit.v1.frontend.LLBBridge/Solve", "/grpc.health.v1.Health/Check", "/moby.buildkit.v1.Control/solve",
	} {
		if allowed(m) {
			t.Errorf("%s allowed", m)
		}
	}
}

func TestParsePreface(t *testing.T) {
	if got, err := parsePreface("devtool-tenant alice-2"); err != nil || got != "alice-2" {
		t.Fatalf("got %q, %v", got, err)
	}
	for _, bad := range []string{"", "alice", "devtool-tenant ", "devtool-tenant ../bob", "devtool-tenant Bob", "devtool-tenant a/b", "devtool-tenant -a", "PRI * HTTP/2.0\r"} {
		if got, err := parsePreface(bad); err == nil {
			t.Errorf("%q accepted as %q", bad, got)
		}
	}
}

func TestReadPrefaceLeavesTheRest(t *testing.T) {
	a, b := net.Pipe()
	go func() { _, _ = a.Write([]byte("devtool-tenant bob\nPRI * HTTP/2.0")); a.Close() }()
	tenant, err := readPreface(b)
	if err != nil || tenant != "bob" {
		t.Fatalf("got %q, %v", tenant, err)
	}
	rest := make([]byte, 3)
	if _, err := b.Read(rest); err != nil || string(rest) != "PRI" {
		t.Fatalf("rest %q, %v", rest, err)
	}
	a2, b2 := net.Pipe()
	go func() { _, _ = a2.Write([]byte(strings.Repeat("x", 200))) }()
	if _, err := readPreface(b2); err == nil {
		t.Fatal("an endless line was accepted")
	}
}

// fakeDaemon stands for tenants' buildkitd: a gRPC server per socket
// that answers every call with the socket's tenant and the call's
// "probe" metadata, as raw bytes.
func fakeDaemon(t *testing.T, socket, tenant string) {
	lis, err := net.Listen("unix", socket)
	if err != nil {
		t.Fatal(err)
	}
	s := grpc.NewServer(grpc.ForceServerCodec(rawCodec{}), grpc.UnknownServiceHandler(func(_ any, stream grpc.ServerStream) error {
		var in []byte
		if err := stream.RecvMsg(&in); err != nil {
			return err
		}
		md, _ := metadata.FromIncomingContext(stream.Context())
		out := []byte(tenant + ":" + strings.Join(md.Get("probe"), ","))
		return stream.SendMsg(&out)
	}))
	go func() { _ = s.Serve(lis) }()
	t.Cleanup(s.Stop)
}

func TestGatewayRoutesEachTenantToItsOwnDaemonAndRefusesTheRest(t *testing.T) {
	dir := t.TempDir()
	cfg := daemonConfig{run: dir, root: dir, max: 2, idle: time.Minute, ready: 10 * time.Second}
	daemons := newTenantDaemons(cfg)
	started := map[string]int{}
	daemons.start = func(cfg daemonConfig, tenant string) (*exec.Cmd, error) {
		started[tenant]++
		fakeDaemon(t, socketOf(cfg, tenant), tenant)
		cmd := exec.Command("sleep", "60")
		t.Cleanup(func() { _ = cmd.Process.Kill() })
		return cmd, cmd.Start()
	}
	serverTLS, clientTLS := testTLS(t)
	server := grpc.NewServer(grpc.Creds(newTenantCredentials(serverTLS)), grpc.ForceServerCodec(rawCodec{}), grpc.UnknownServiceHandler(forward(daemons)))
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = server.Serve(lis) }()
	t.Cleanup(server.Stop)

	call := func(tenant, method string) (string, error) {
		conn, err := grpc.NewClient("passthrough:///gateway",
			grpc.WithTransportCredentials(insecure.NewCredentials()),
			grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) {
				c, err := (&tls.Dialer{Config: clientTLS}).DialContext(ctx, "tcp", lis.Addr().String())
				if err != nil {
					return nil, err
				}
				_, err = c.Write([]byte(prefacePrefix + tenant + "\n"))
				return c, err
			}))
		if err != nil {
			return "", err
		}
		defer conn.Close()
		ctx, cancel := context.WithTimeout(metadata.AppendToOutgoingContext(context.Background(), "probe", "p1"), 10*time.Second)
		defer cancel()
		in, out := []byte("x"), []byte{}
		err = conn.Invoke(ctx, method, &in, &out, grpc.ForceCodec(rawCodec{}))
		return string(out), err
	}
	for _, tc := range []struct{ tenant, want string }{{"alice", "alice:p1"}, {"bob", "bob:p1"}, {"alice", "alice:p1"}} {
		got, err := call(tc.tenant, "/moby.buildkit.v1.Control/Info")
		if err != nil || got != tc.want {
			t.Fatalf("%s: got %q, %v; want %q", tc.tenant, got, err, tc.want)
		}
	}
	if started["alice"] != 1 || started["bob"] != 1 {
		t.Fatalf("daemons started: %v (one per tenant, reused)", started)
	}
	_, err = call("alice", "/moby.buildkit.v1.Control/Prune")
	if status.Code(err) != codes.PermissionDenied {
		t.Fatalf("Prune: %v, want PermissionDenied", err)
	}
	if _, err := call("../x", "/moby.buildkit.v1.Control/Info"); err == nil {
		t.Fatal("a bad tenant name was served")
	}
}

func TestAtMostMaxDaemonsTheIdleOneMakesRoom(t *testing.T) {
	dir := t.TempDir()
	daemons := newTenantDaemons(daemonConfig{run: dir, root: dir, max: 1, idle: time.Minute, ready: 10 * time.Second})
	daemons.start = func(cfg daemonConfig, tenant string) (*exec.Cmd, error) {
		fakeDaemon(t, socketOf(cfg, tenant), tenant)
		cmd := exec.Command("sleep", "60")
		return cmd, cmd.Start()
	}
	ctx := context.Background()
	_, releaseA, err := daemons.acquire(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := daemons.acquire(ctx, "bob"); status.Code(err) != codes.ResourceExhausted {
		t.Fatalf("bob while alice builds: %v, want ResourceExhausted", err)
	}
	releaseA()
	_, releaseB, err := daemons.acquire(ctx, "bob")
	if err != nil {
		t.Fatalf("bob once alice is idle: %v", err)
	}
	releaseB()
	if _, ok := daemons.running["alice"]; ok {
		t.Fatal("alice's idle daemon still counted")
	}
}

func testTLS(t *testing.T) (server, client *tls.Config) {
	key := func() *ecdsa.PrivateKey {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	caKey := key()
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "ca"}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	caDER, _ := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	ca, _ := x509.ParseCertificate(caDER)
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	leaf := func(serial int64, usage x509.ExtKeyUsage) tls.Certificate {
		k := key()
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: "leaf"}, DNSNames: []string{"gateway"}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), ExtKeyUsage: []x509.ExtKeyUsage{usage}}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &k.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: k}
	}
	server = &tls.Config{Certificates: []tls.Certificate{leaf(2, x509.ExtKeyUsageServerAuth)}, ClientCAs: pool, ClientAuth: tls.RequireAndVerifyClientCert}
	client = &tls.Config{Certificates: []tls.Certificate{leaf(3, x509.ExtKeyUsageClientAuth)}, RootCAs: pool, ServerName: "gateway", NextProtos: []string{"h2"}}
	return server, client
}

func TestOnlyTheMostRecentlyUsedRootsAreKept(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	for _, name := range []string{"old", "older", "busy", "recent"} {
		path := filepath.Join(dir, name)
		if err := os.Mkdir(path, 0o700); err != nil {
			t.Fatal(err)
		}
		age := map[string]time.Duration{"old": 2 * time.Hour, "older": 3 * time.Hour, "busy": 5 * time.Hour, "recent": time.Minute}[name]
		if err := os.Chtimes(path, now.Add(-age), now.Add(-age)); err != nil {
			t.Fatal(err)
		}
	}
	entries, _ := os.ReadDir(dir)
	got := rootsToDelete(entries, 2, map[string]bool{"busy": true})
	if strings.Join(got, ",") != "older,old" {
		t.Fatalf("deleted %v, want the two least recently used idle ones (busy is never deleted)", got)
	}
	if got := rootsToDelete(entries, 4, map[string]bool{"busy": true}); len(got) != 0 {
		t.Fatalf("deleted %v within the limit", got)
	}
	pruneRoots(daemonConfig{root: dir, keep: 3}, map[string]bool{"busy": true})
	left, _ := os.ReadDir(dir)
	var names []string
	for _, e := range left {
		names = append(names, e.Name())
	}
	if strings.Join(names, ",") != "busy,old,recent" {
		t.Fatalf("left %v", names)
	}
}
