package syncthingcfg

import (
	"crypto/sha256"
	"crypto/x509"
	"encoding/base32"
	"encoding/pem"
	"errors"
	"fmt"
	"strings"
)

// Syncthing's device ID is derived from the device certificate, so the
// agent can compute its own and check the one the CLI expects, and a
// mismatch is caught before two peers silently refuse each other.

const luhnAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"

// DeviceIDFromCertPEM returns the Syncthing device ID of a PEM certificate.
func DeviceIDFromCertPEM(certPEM string) (string, error) {
	block, _ := pem.Decode([]byte(certPEM))
	if block == nil || block.Type != "CERTIFICATE" {
		return "", errors.New("syncthing certificate: no PEM CERTIFICATE block")
	}
	if _, err := x509.ParseCertificate(block.Bytes); err != nil {
		return "", fmt.Errorf("syncthing certificate: %w", err)
	}
	return DeviceIDFromDER(block.Bytes), nil
}

// DeviceIDFromDER formats sha256(der) the way Syncthing does: base32
// without padding (52 chars), a check character after each 13, then
// groups of 7 joined by dashes.
func DeviceIDFromDER(der []byte) string {
	sum := sha256.Sum256(der)
	s := strings.TrimRight(base32.StdEncoding.EncodeToString(sum[:]), "=")
	var b strings.Builder
	for i := 0; i < 4; i++ {
		part := s[i*13 : (i+1)*13]
		b.WriteString(part)
		b.WriteByte(luhn32(part))
	}
	flat := b.String()
	groups := make([]string, 0, len(flat)/7)
	for i := 0; i < len(flat); i += 7 {
		groups = append(groups, flat[i:i+7])
	}
	return strings.Join(groups, "-")
}

// luhn32 is Syncthing's check character: Luhn mod 32 over the base32
// alphabet, with the factor starting at 1 from the left.
func luhn32(s string) byte {
	factor, sum := 1, 0
	for i := 0; i < len(s); i++ {
		addend := factor * strings.IndexByte(luhnAlphabet, s[i])
		factor = 3 - factor // alternate 1, 2
		sum += addend/32 + addend%32
	}
	return luhnAlphabet[(32-sum%32)%32]
}

// NormalizeDeviceID checks a device ID's shape and check characters and
// returns it in canonical dashed upper-case form.
func NormalizeDeviceID(id string) (string, error) {
	flat := strings.ToUpper(strings.NewReplacer("-", "", " ", "").Replace(id))
	if len(flat) != 56 {
		return "", fmt.Errorf("device ID %q: want 56 characters without dashes, got %d", id, len(flat))
	}
	for i := 0; i < 4; i++ {
		part := flat[i*14 : i*14+13]
		if strings.Trim(part, luhnAlphabet) != "" {
			return "", fmt.Errorf("device ID %q: invalid characters", id)
		}
		if luhn32(part) != flat[i*14+13] {
			return "", fmt.Errorf("device ID %q: check character mismatch", id)
		}
	}
	groups := make([]string, 0, 8)
	for i := 0; i < 56; i += 7 {
		groups = append(groups, flat[i:i+7])
	}
	return strings.Join(groups, "-"), nil
}
