// devtool-buildkit-gateway: the front of the chart's hosted builder. The
// service's build tunnel reaches it (mutual TLS: only the service's client
// certificate), names the authenticated user in one preface line, and then
// carries the user's BuildKit gRPC. The gateway forwards only the calls a
// build needs, each to the user's own buildkitd (its own cache, content
// store and history), which it starts on demand and stops when idle.
package main

import (
	"crypto/tls"
	"crypto/x509"
	"flag"
	"log"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"

	"google.golang.org/grpc"
)

func main() {
	listen := flag.String("listen", "", "TCP address to serve on (HOST:PORT)")
	cert := flag.String("tls-cert", "", "the gateway's certificate (PEM)")
	key := flag.String("tls-key", "", "its key (PEM)")
	ca := flag.String("tls-ca", "", "the CA of the only accepted client certificate (the service's)")
	cfg := daemonConfig{ready: 60 * time.Second}
	flag.StringVar(&cfg.buildkitd, "buildkitd", "/usr/local/bin/buildkitd", "the buildkitd binary")
	flag.StringVar(&cfg.config, "config", "/etc/buildkit/buildkitd.toml", "buildkitd.toml of every tenant's daemon")
	flag.StringVar(&cfg.root, "root", "/var/lib/buildkit/tenants", "tenants' daemon state, one folder each")
	flag.StringVar(&cfg.run, "run", "/run/devtool-builder", "tenants' daemon sockets")
	flag.IntVar(&cfg.max, "max-daemons", 4, "tenants' daemons running at once")
	flag.IntVar(&cfg.keep, "keep-users", 8, "users' build caches kept on disk (the least recently used beyond are deleted)")
	flag.DurationVar(&cfg.idle, "idle", 10*time.Minute, "stop a tenant's daemon after this long without calls")
	flag.Parse()
	log.SetFlags(log.LstdFlags | log.LUTC)
	if *listen == "" || *cert == "" || *key == "" || *ca == "" || cfg.max < 1 || cfg.keep < cfg.max {
		log.Fatal("--listen, --tls-cert, --tls-key and --tls-ca are required; --max-daemons at least 1, --keep-users at least as many")
	}
	tlsConfig, err := serverTLS(*cert, *key, *ca)
	if err != nil {
		log.Fatal(err)
	}
	daemons := newTenantDaemons(cfg)
	server := grpc.NewServer(
		grpc.Creds(newTenantCredentials(tlsConfig)),
		grpc.ForceServerCodec(rawCodec{}),
		grpc.UnknownServiceHandler(forward(daemons)),
	)
	lis, err := net.Listen("tcp", *listen)
	if err != nil {
		log.Fatal(err)
	}
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT)
	go func() {
		<-signals
		server.Stop()
	}()
	log.Printf("serving on %s: at most %d tenants' daemons, stopped after %s idle", *listen, cfg.max, cfg.idle)
	if err := server.Serve(lis); err != nil {
		log.Print(err)
	}
	daemons.stopAll(40 * time.Second)
}

// serverTLS requires a client certificate signed by ca.
func serverTLS(certFile, keyFile, caFile string) (*tls.Config, error) {
	pair, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, err
	}
	pem, err := os.ReadFile(caFile)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, os.ErrInvalid
	}
	return &tls.Config{Certificates: []tls.Certificate{pair}, ClientCAs: pool, ClientAuth: tls.RequireAndVerifyClientCert, MinVersion: tls.VersionTLS12}, nil
}
