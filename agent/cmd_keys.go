package agent

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"

	"golang.org/x/crypto/ssh"

	"devtool.dev/agent/internal/config"
	"devtool.dev/agent/internal/syncthingcfg"
)

// runSyncthingConfig writes a Syncthing home from a contract's syncthing
// section. The CLI can use it for its local instance too, so both ends'
// config.xml come from one generator.
func runSyncthingConfig(args []string) error {
	fs := flag.NewFlagSet("syncthing-config", flag.ContinueOnError)
	home := fs.String("home", "", "Syncthing home directory to write (required)")
	file := fs.String("config", "", "contract file (default $"+config.EnvConfig+")")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *home == "" {
		return errors.New("--home is required")
	}
	path := *file
	if path == "" {
		var err error
		if path, err = config.Path(); err != nil {
			return err
		}
	}
	cfg, err := config.Load(path)
	if err != nil {
		return err
	}
	if err := cfg.ValidateSyncthing(); err != nil {
		return err
	}
	id, err := syncthingcfg.WriteHome(*home, cfg.Syncthing)
	if err != nil {
		return err
	}
	fmt.Println(id)
	return nil
}

// Keys is what `keygen` prints: everything secret a contract needs for one
// dev environment, freshly generated.
type Keys struct {
	SSHHostKey       string                `json:"sshHostKey"`       // contract ssh.hostKey
	SSHHostPublicKey string                `json:"sshHostPublicKey"` // for the CLI's known_hosts pin
	Syncthing        syncthingcfg.Identity `json:"syncthing"`
	APIKey           string                `json:"apiKey"`
	GUIPassword      string                `json:"guiPassword"`
}

func runKeygen(args []string) error {
	fs := flag.NewFlagSet("keygen", flag.ContinueOnError)
	if err := fs.Parse(args); err != nil {
		return err
	}
	k, err := NewKeys()
	if err != nil {
		return err
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(k)
}

// NewKeys generates an ed25519 host key, a Syncthing identity and random
// API key and GUI password.
func NewKeys() (Keys, error) {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return Keys{}, err
	}
	block, err := ssh.MarshalPrivateKey(priv, "devtool-agent host key")
	if err != nil {
		return Keys{}, err
	}
	sshPub, err := ssh.NewPublicKey(pub)
	if err != nil {
		return Keys{}, err
	}
	id, err := syncthingcfg.NewIdentity()
	if err != nil {
		return Keys{}, err
	}
	return Keys{
		SSHHostKey:       string(pem.EncodeToMemory(block)),
		SSHHostPublicKey: strings.TrimSpace(string(ssh.MarshalAuthorizedKey(sshPub))),
		Syncthing:        id,
		APIKey:           randomHex(16),
		GUIPassword:      randomHex(16),
	}, nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}
