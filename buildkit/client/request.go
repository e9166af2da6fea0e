package buildkitclient

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/moby/buildkit/client"
	"google.golang.org/grpc/keepalive"
)

// Request is the one JSON object read from stdin (documented in buildkit/README.md).
type Request struct {
	Address     string            `json:"address"`
	ContextDir  string            `json:"contextDir"`
	Dockerfile  string            `json:"dockerfile"`
	Target      string            `json:"target,omitempty"`
	Args        map[string]string `json:"args,omitempty"`
	Secrets     map[string]string `json:"secrets,omitempty"`
	NoCache     bool              `json:"noCache,omitempty"`
	CacheFrom   []string          `json:"cacheFrom,omitempty"`
	ExportCache []string          `json:"exportCache,omitempty"`
	Tags        []string          `json:"tags"`
	Labels      map[string]string `json:"labels,omitempty"`
	Keepalive   Keepalive         `json:"keepalive"`
}

// Keepalive is the gRPC keepalive of the connection to the daemon
// (DEVTOOL_KEEPALIVE_CLIENT_*); a missing field takes the default below.
type Keepalive struct {
	TimeMs              *int64 `json:"timeMs,omitempty"`
	TimeoutMs           *int64 `json:"timeoutMs,omitempty"`
	PermitWithoutStream *bool  `json:"permitWithoutStream,omitempty"`
}

const (
	// The floor for the ping interval, gRPC's own: a shorter one is raised to it.
	minKeepaliveTime = 10 * time.Second
	// The wait for a ping's answer when none is set, gRPC's default.
	defaultKeepaliveTimeout = 20 * time.Second
	// gRPC's "infinity": no keepalive pings at all.
	infinity = time.Duration(math.MaxInt64)
)

// ClientParameters maps the request's keepalive to gRPC's: no time means no
// pings (infinity), a time below 10s is raised to 10s, the timeout defaults
// to 20s and pings without active calls are off unless asked for.
func (k Keepalive) ClientParameters() keepalive.ClientParameters {
	p := keepalive.ClientParameters{Time: infinity, Timeout: defaultKeepaliveTimeout}
	if k.TimeMs != nil {
		p.Time = max(time.Duration(*k.TimeMs)*time.Millisecond, minKeepaliveTime)
	}
	if k.TimeoutMs != nil {
		p.Timeout = time.Duration(*k.TimeoutMs) * time.Millisecond
	}
	if k.PermitWithoutStream != nil {
		p.PermitWithoutStream = *k.PermitWithoutStream
	}
	return p
}

// ReadRequest decodes exactly one JSON object (unknown fields are mistakes)
// and validates it.
func ReadRequest(r io.Reader) (*Request, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("reading the request: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var req Request
	if err := dec.Decode(&req); err != nil {
		return nil, fmt.Errorf("invalid request: %w", err)
	}
	if dec.More() {
		return nil, fmt.Errorf("invalid request: more than one JSON value")
	}
	if err := req.Validate(); err != nil {
		return nil, fmt.Errorf("invalid request: %w", err)
	}
	return &req, nil
}

// Validate checks what the daemon would otherwise reject late or obscurely.
func (r *Request) Validate() error {
	if err := validateAddress(r.Address); err != nil {
		return err
	}
	if !filepath.IsAbs(r.ContextDir) {
		return fmt.Errorf("contextDir must be an absolute path, got %q", r.ContextDir)
	}
	if st, err := os.Stat(r.ContextDir); err != nil || !st.IsDir() {
		return fmt.Errorf("build context %s is not a folder", r.ContextDir)
	}
	if !filepath.IsAbs(r.Dockerfile) {
		return fmt.Errorf("dockerfile must be an absolute path, got %q", r.Dockerfile)
	}
	if st, err := os.Stat(r.Dockerfile); err != nil || !st.Mode().IsRegular() {
		return fmt.Errorf("Dockerfile %s does not exist", r.Dockerfile)
	}
	if len(r.Tags) == 0 {
		return fmt.Errorf("no tags: at least one image reference is needed")
	}
	for _, t := range r.Tags {
		// The image exporter takes the names comma-separated.
		if t == "" || strings.ContainsAny(t, ", \t\n") {
			return fmt.Errorf("invalid image reference %q", t)
		}
	}
	for _, c := range append(append([]string{}, r.CacheFrom...), r.ExportCache...) {
		if c == "" || strings.ContainsAny(c, ", \t\n") {
			return fmt.Errorf("invalid cache image reference %q", c)
		}
	}
	for _, id := range sortedKeys(r.Secrets) {
		path := r.Secrets[id]
		if id == "" {
			return fmt.Errorf("a secret has an empty id")
		}
		if st, err := os.Stat(path); err != nil || !st.Mode().IsRegular() {
			return fmt.Errorf("secret %s: file %s does not exist", id, path)
		}
	}
	for _, k := range sortedKeys(r.Args) {
		if k == "" || strings.ContainsAny(k, "= \t\n") {
			return fmt.Errorf("invalid build argument name %q", k)
		}
	}
	for _, k := range sortedKeys(r.Labels) {
		if k == "" || strings.ContainsAny(k, "= \t\n") {
			return fmt.Errorf("invalid label name %q", k)
		}
	}
	ka := r.Keepalive
	if ka.TimeMs != nil && *ka.TimeMs < 0 {
		return fmt.Errorf("keepalive timeMs must be 0 or more, got %d", *ka.TimeMs)
	}
	if ka.TimeoutMs != nil && *ka.TimeoutMs <= 0 {
		return fmt.Errorf("keepalive timeoutMs must be more than 0, got %d", *ka.TimeoutMs)
	}
	return nil
}

// validateAddress accepts what BuildKit's client dials: tcp://HOST:PORT,
// unix:///path and, on Windows, npipe:////./pipe/NAME.
func validateAddress(address string) error {
	return validateAddressOn(address, runtime.GOOS)
}

func validateAddressOn(address, goos string) error {
	u, err := url.Parse(address)
	if err != nil || address == "" {
		return fmt.Errorf("invalid daemon address %q: expected tcp://HOST:PORT or unix:///PATH", address)
	}
	switch u.Scheme {
	case "tcp":
		if u.Hostname() == "" || u.Port() == "" || (u.Path != "" && u.Path != "/") {
			return fmt.Errorf("invalid daemon address %q: expected tcp://HOST:PORT", address)
		}
	case "unix":
		if u.Path == "" && u.Host == "" {
			return fmt.Errorf("invalid daemon address %q: expected unix:///PATH", address)
		}
	case "npipe":
		if goos != "windows" || !strings.HasPrefix(u.Path, "//./pipe/") {
			return fmt.Errorf("invalid daemon address %q: expected npipe:////./pipe/NAME, on Windows", address)
		}
	default:
		return fmt.Errorf("invalid daemon address %q: expected tcp://HOST:PORT or unix:///PATH", address)
	}
	return nil
}

// SolveOpt is the solve of the request with the dockerfile.v0 frontend
// (built into buildkitd): local mounts and the session's attachables are
// added by the caller.
func (r *Request) SolveOpt() client.SolveOpt {
	attrs := map[string]string{"filename": filepath.Base(r.Dockerfile)}
	if r.Target != "" {
		attrs["target"] = r.Target
	}
	if r.NoCache {
		attrs["no-cache"] = ""
	}
	for k, v := range r.Args {
		attrs["build-arg:"+k] = v
	}
	for k, v := range r.Labels {
		attrs["label:"+k] = v
	}
	opt := client.SolveOpt{
		Frontend:      "dockerfile.v0",
		FrontendAttrs: attrs,
		Exports: []client.ExportEntry{{
			Type:  client.ExporterImage,
			Attrs: map[string]string{"name": strings.Join(r.Tags, ","), "push": "true"},
		}},
	}
	for _, ref := range r.CacheFrom {
		opt.CacheImports = append(opt.CacheImports, client.CacheOptionsEntry{Type: "registry", Attrs: map[string]string{"ref": ref}})
	}
	for _, ref := range r.ExportCache {
		opt.CacheExports = append(opt.CacheExports, client.CacheOptionsEntry{Type: "registry", Attrs: map[string]string{"ref": ref, "mode": "max"}})
	}
	return opt
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
