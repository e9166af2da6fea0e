//go:build linux

package agent

import (
	"flag"
	"fmt"
	"log"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"golang.org/x/crypto/ssh"

	"devtool.dev/agent/internal/config"
	"devtool.dev/agent/internal/sshserver"
)

func runSSH(args []string) error {
	fs := flag.NewFlagSet("ssh", flag.ContinueOnError)
	listen := fs.String("listen", "", "listen address (default: the contract's ssh.listenAddress, "+config.DefaultSSHListen+")")
	if err := fs.Parse(args); err != nil {
		return err
	}
	path, err := config.Path()
	if err != nil {
		return err
	}
	cfg, err := config.Load(path)
	if err != nil {
		return err
	}
	if err := cfg.ValidateSSH(); err != nil {
		return err
	}
	hostKey, err := ssh.ParsePrivateKey([]byte(cfg.SSH.HostKey))
	if err != nil {
		return fmt.Errorf("ssh.hostKey: %w", err)
	}
	keys, err := sshserver.ParseAuthorizedKeys(cfg.SSH.AuthorizedKeys)
	if err != nil {
		return fmt.Errorf("ssh.authorizedKeys: %w", err)
	}
	logger := log.New(os.Stderr, "ssh: ", log.LstdFlags)
	srv, err := sshserver.New(sshserver.Config{
		HostKey:           hostKey,
		AuthorizedKeys:    keys,
		KeepaliveInterval: cfg.SSH.KeepaliveInterval(),
		KeepaliveCount:    cfg.SSH.KeepaliveCount(),
		Env:               sessionEnv(),
		Logf:              logger.Printf,
	})
	if err != nil {
		return err
	}
	addr := *listen
	if addr == "" {
		addr = cfg.SSH.ListenAddress
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	logger.Printf("listening on %s, host key %s, %d authorized key(s)",
		ln.Addr(), ssh.FingerprintSHA256(hostKey.PublicKey()), len(keys))

	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	go func() {
		sig := <-sigs
		logger.Printf("%s: closing", sig)
		srv.Close()
	}()
	return srv.Serve(ln)
}

// sessionEnv is the container environment the user's commands get: the
// agent's own plumbing variables are left out.
func sessionEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		switch name {
		case config.EnvConfig, EnvSyncthingBin, "STMONITORED", "STNOUPGRADE", "STNORESTART", "STNODEFAULTFOLDER":
			continue
		}
		env = append(env, kv)
	}
	return env
}
