package syncthingcfg

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"time"

	"devtool.dev/agent/internal/config"

	"devtool.dev/agent/internal/atomicfile"
)

// WriteHome writes config.xml, cert.pem and key.pem for st into home and
// returns the device ID. It runs before every Syncthing start, so the
// Secret stays the single source of truth: anything changed at run time
// through the REST API is replaced by the contract on the next start.
func WriteHome(home string, st config.Syncthing) (string, error) {
	if _, err := tls.X509KeyPair([]byte(st.Certificate), []byte(st.Key)); err != nil {
		return "", fmt.Errorf("syncthing certificate/key: %w", err)
	}
	selfID, err := DeviceIDFromCertPEM(st.Certificate)
	if err != nil {
		return "", err
	}
	if st.DeviceID != "" {
		want, err := NormalizeDeviceID(st.DeviceID)
		if err != nil {
			return "", fmt.Errorf("syncthing.deviceID: %w", err)
		}
		if want != selfID {
			return "", fmt.Errorf("syncthing.deviceID %s does not match the certificate (%s)", want, selfID)
		}
	}
	xmlData, err := ConfigXML(st, selfID)
	if err != nil {
		return "", err
	}
	// 0700: the home holds the private key and the API key.
	if err := os.MkdirAll(home, 0o700); err != nil {
		return "", fmt.Errorf("syncthing home: %w", err)
	}
	files := []struct {
		name string
		data []byte
		mode os.FileMode
	}{
		{"cert.pem", []byte(st.Certificate), 0o644},
		{"key.pem", []byte(st.Key), 0o600},
		{"config.xml", xmlData, 0o600},
	}
	for _, f := range files {
		if err := atomicfile.Write(filepath.Join(home, f.name), bytes.NewReader(f.data), f.mode); err != nil {
			return "", err
		}
	}
	return selfID, nil
}

// Args is Syncthing's command line (after the binary) for a home written
// by WriteHome. Use it with Env: together they make Syncthing one process
// that exits instead of restarting itself; the supervisor restarts it.
func Args(home string) []string {
	return []string{
		"serve",
		"--home=" + home,
		"--no-browser",
		"--no-restart",
		"--no-upgrade",
		"--no-default-folder",
		"--skip-port-probing",
		"--logfile=-", // stdout: the supervisor owns log files and rotation
		"--logflags=3",
	}
}

// Env is the extra environment for Syncthing. STMONITORED=yes (its
// internal "I am the monitored child" switch) skips its monitor process:
// even with --no-restart, v1.30 otherwise forks the real server as a child,
// which survives a SIGKILL of the PID we watch, keeps the database lock
// and makes every restart fail. The others back up the flags above.
func Env() []string {
	return []string{"STMONITORED=yes", "STNOUPGRADE=1", "STNORESTART=1", "STNODEFAULTFOLDER=1"}
}

// Identity is a freshly generated Syncthing device certificate.
type Identity struct {
	Certificate string `json:"certificate"`
	Key         string `json:"key"`
	DeviceID    string `json:"deviceID"`
}

// NewIdentity generates a device certificate like Syncthing's own
// (`syncthing generate`): self-signed ECDSA P-384, CN "syncthing". Each
// dev environment gets its own pair, unlike a hard-coded one.
func NewIdentity() (Identity, error) {
	priv, err := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	if err != nil {
		return Identity{}, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 63))
	if err != nil {
		return Identity{}, err
	}
	notBefore := time.Now().Add(-24 * time.Hour).Truncate(24 * time.Hour)
	tmpl := x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: "syncthing", Organization: []string{"Syncthing"}},
		DNSNames:              []string{"syncthing"},
		NotBefore:             notBefore,
		NotAfter:              notBefore.Add(20 * 365 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageKeyEncipherment | x509.KeyUsageDigitalSignature,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, &tmpl, &tmpl, priv.Public(), priv)
	if err != nil {
		return Identity{}, err
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		return Identity{}, err
	}
	return Identity{
		Certificate: string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})),
		Key:         string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER})),
		DeviceID:    DeviceIDFromDER(der),
	}, nil
}
