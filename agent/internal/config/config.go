// Package config is the contract between the devtool CLI and the agent: a
// JSON document the CLI stores in a Kubernetes Secret, mounted into the dev
// container, whose path is given in $DEVTOOL_AGENT_CONFIG. README.md
// documents every field; keep the two in step.
package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Environment variables the agent reads. The CLI sets them in the pod spec.
const (
	EnvConfig = "DEVTOOL_AGENT_CONFIG" // path of the JSON contract
	EnvState  = "DEVTOOL_STATE"        // state dir (PVC); wins over Config.StateDir
)

// Defaults, used when the contract leaves a field empty.
const (
	DefaultStateDir          = "/var/devtool"
	DefaultSSHListen         = "127.0.0.1:2222"
	DefaultSSHKeepalive      = 15 * time.Second
	DefaultGUIAddress        = "127.0.0.1:8384"
	DefaultSyncListen        = "tcp://127.0.0.1:22000"
	DefaultDeviceName        = "devtool-remote"
	DefaultPeerName          = "devtool-local"
	DefaultGUIUser           = "devtool"
	DefaultRescanIntervalS   = 300
	DefaultFSWatcherDelayS   = 1
	DefaultReconnectInterval = 5
)

// Version is the only contract version this agent understands. A CLI that
// writes a newer one gets a clear error instead of a half-understood config.
const Version = 1

// Config is the whole contract.
type Config struct {
	Version   int       `json:"version"`
	StateDir  string    `json:"stateDir,omitempty"`
	SSH       SSH       `json:"ssh"`
	Syncthing Syncthing `json:"syncthing"`
}

// SSH configures the agent's SSH server.
type SSH struct {
	ListenAddress string `json:"listenAddress,omitempty"`
	// HostKey is a PEM private key (OpenSSH, PKCS#8, PKCS#1 or SEC1). The
	// CLI generates it, so it already knows the public half and can pin it
	// instead of trusting on first use.
	HostKey string `json:"hostKey"`
	// AuthorizedKeys are public keys in authorized_keys format.
	AuthorizedKeys    []string `json:"authorizedKeys"`
	KeepaliveSeconds  int      `json:"keepaliveIntervalSeconds,omitempty"`
	KeepaliveMaxCount int      `json:"keepaliveCountMax,omitempty"`
}

// Syncthing configures one Syncthing instance (the agent's, or - through
// `devtool-agent syncthing-config` - the CLI's local one).
type Syncthing struct {
	Certificate   string   `json:"certificate"` // PEM; its hash is the device ID
	Key           string   `json:"key"`         // PEM
	DeviceID      string   `json:"deviceID,omitempty"`
	DeviceName    string   `json:"deviceName,omitempty"`
	APIKey        string   `json:"apiKey"`
	GUIUser       string   `json:"guiUser,omitempty"`
	GUIPassword   string   `json:"guiPassword"`
	GUIAddress    string   `json:"guiAddress,omitempty"`
	ListenAddress string   `json:"listenAddress,omitempty"`
	Peer          Peer     `json:"peer"`
	Folders       []Folder `json:"folders"`
	// ReconnectIntervalS is how often a disconnected peer is redialled.
	// Syncthing's default (60 s) is far too slow after a pod restart.
	ReconnectIntervalS int `json:"reconnectIntervalS,omitempty"`
}

// Peer is the other Syncthing: for the agent, the CLI's local instance.
type Peer struct {
	DeviceID string `json:"deviceID"`
	Name     string `json:"name,omitempty"`
	// Addresses to dial, e.g. "tcp://127.0.0.1:40123". Empty means never
	// dial and only accept: the agent side, which the CLI reaches through
	// its SSH tunnel.
	Addresses []string `json:"addresses,omitempty"`
}

// Folder is one synchronised folder.
type Folder struct {
	ID    string `json:"id"`
	Path  string `json:"path"`
	Label string `json:"label,omitempty"`
	// Type is sendreceive (default), sendonly or receiveonly.
	Type         string `json:"type,omitempty"`
	IgnoreDelete bool   `json:"ignoreDelete,omitempty"`
	// DisableFsync trades durability for speed; nil means true on the agent
	// side, where the PVC content can always be resent from the laptop.
	DisableFsync     *bool `json:"disableFsync,omitempty"`
	RescanIntervalS  int   `json:"rescanIntervalS,omitempty"`
	FSWatcherEnabled *bool `json:"fsWatcherEnabled,omitempty"`
	FSWatcherDelayS  int   `json:"fsWatcherDelayS,omitempty"`
	IgnorePerms      bool  `json:"ignorePerms,omitempty"`
	MaxConflicts     int   `json:"maxConflicts,omitempty"`
	// CaseSensitiveFS turns off Syncthing's checks for a case-insensitive
	// file system. Those list a folder's directory again after every file
	// created, renamed or removed in it: quadratic in a directory of
	// thousands of files. The CLI sets it where the file system is known
	// to be case-sensitive.
	CaseSensitiveFS bool `json:"caseSensitiveFS,omitempty"`
	// MarkerName is the path whose existence tells Syncthing the folder
	// is there (default ".stfolder", created on first start). The CLI's
	// local end uses "." so no marker lands in the user's project.
	MarkerName string `json:"markerName,omitempty"`
	// Paused starts the folder paused (no scan, no sync) until it is
	// unpaused through the REST API. The CLI starts its own Syncthing that
	// way while it copies a new volume's first content in one stream, so
	// the local first scan does not take the CPU the copy needs.
	Paused bool `json:"paused,omitempty"`
}

// Path returns the contract path named by $DEVTOOL_AGENT_CONFIG.
func Path() (string, error) {
	p := os.Getenv(EnvConfig)
	if p == "" {
		return "", fmt.Errorf("%s is not set: it must name the agent config file (mounted from the dev container's Secret)", EnvConfig)
	}
	return p, nil
}

// Load reads and validates the contract at path.
func Load(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read agent config: %w", err)
	}
	return Parse(data)
}

// Parse decodes and validates a contract. Unknown fields are errors: a
// typo in the CLI should fail loudly, not silently fall back to a default.
func Parse(data []byte) (*Config, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var c Config
	if err := dec.Decode(&c); err != nil {
		return nil, fmt.Errorf("parse agent config: %w", err)
	}
	if c.Version != Version {
		return nil, fmt.Errorf("agent config version %d is not supported (this agent understands %d)", c.Version, Version)
	}
	c.applyDefaults()
	return &c, nil
}

func (c *Config) applyDefaults() {
	if c.SSH.ListenAddress == "" {
		c.SSH.ListenAddress = DefaultSSHListen
	}
	st := &c.Syncthing
	if st.DeviceName == "" {
		st.DeviceName = DefaultDeviceName
	}
	if st.GUIUser == "" {
		st.GUIUser = DefaultGUIUser
	}
	if st.GUIAddress == "" {
		st.GUIAddress = DefaultGUIAddress
	}
	if st.ListenAddress == "" {
		st.ListenAddress = DefaultSyncListen
	}
	if st.Peer.Name == "" {
		st.Peer.Name = DefaultPeerName
	}
	if st.ReconnectIntervalS == 0 {
		st.ReconnectIntervalS = DefaultReconnectInterval
	}
	for i := range st.Folders {
		f := &st.Folders[i]
		if f.Type == "" {
			f.Type = "sendreceive"
		}
		if f.Label == "" {
			f.Label = filepath.Base(f.Path)
		}
		if f.RescanIntervalS == 0 {
			f.RescanIntervalS = DefaultRescanIntervalS
		}
		if f.FSWatcherDelayS == 0 {
			f.FSWatcherDelayS = DefaultFSWatcherDelayS
		}
	}
}

// StateDirectory resolves the state dir: $DEVTOOL_STATE, then the
// contract, then the default.
func (c *Config) StateDirectory() string {
	if v := os.Getenv(EnvState); v != "" {
		return v
	}
	if c != nil && c.StateDir != "" {
		return c.StateDir
	}
	return DefaultStateDir
}

// KeepaliveInterval is how often the SSH server probes an idle client.
func (s SSH) KeepaliveInterval() time.Duration {
	if s.KeepaliveSeconds > 0 {
		return time.Duration(s.KeepaliveSeconds) * time.Second
	}
	return DefaultSSHKeepalive
}

// KeepaliveCount is how many unanswered probes drop a connection.
func (s SSH) KeepaliveCount() int {
	if s.KeepaliveMaxCount > 0 {
		return s.KeepaliveMaxCount
	}
	return 3
}

// ValidateSSH checks the fields the SSH server needs.
func (c *Config) ValidateSSH() error {
	if len(c.SSH.AuthorizedKeys) == 0 {
		return errors.New("agent config: ssh.authorizedKeys is empty: nobody could log in")
	}
	if strings.TrimSpace(c.SSH.HostKey) == "" {
		return errors.New("agent config: ssh.hostKey is empty: the CLI could not pin the server")
	}
	return nil
}

// ValidateSyncthing checks the fields Syncthing's config needs.
func (c *Config) ValidateSyncthing() error {
	st := c.Syncthing
	var errs []error
	need := func(v, name string) {
		if strings.TrimSpace(v) == "" {
			errs = append(errs, fmt.Errorf("syncthing.%s is empty", name))
		}
	}
	need(st.Certificate, "certificate")
	need(st.Key, "key")
	need(st.APIKey, "apiKey")
	need(st.GUIPassword, "guiPassword")
	need(st.Peer.DeviceID, "peer.deviceID")
	if len(st.Folders) == 0 {
		errs = append(errs, errors.New("syncthing.folders is empty"))
	}
	seen := map[string]bool{}
	for i, f := range st.Folders {
		switch {
		case f.ID == "":
			errs = append(errs, fmt.Errorf("syncthing.folders[%d].id is empty", i))
		case seen[f.ID]:
			errs = append(errs, fmt.Errorf("syncthing.folders[%d].id %q is used twice", i, f.ID))
		}
		seen[f.ID] = true
		if !filepath.IsAbs(f.Path) {
			errs = append(errs, fmt.Errorf("syncthing.folders[%d].path %q is not absolute", i, f.Path))
		}
		switch f.Type {
		case "sendreceive", "sendonly", "receiveonly":
		default:
			errs = append(errs, fmt.Errorf("syncthing.folders[%d].type %q is not sendreceive, sendonly or receiveonly", i, f.Type))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("agent config: %w", err)
	}
	return nil
}
