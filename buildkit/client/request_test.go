package buildkitclient

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/moby/buildkit/client"
	gatewaypb "github.com/moby/buildkit/frontend/gateway/pb"
	"github.com/moby/buildkit/solver/errdefs"
	"github.com/moby/buildkit/solver/pb"
	digest "github.com/opencontainers/go-digest"
)

func ptr[T any](v T) *T { return &v }

func TestKeepaliveDefaultsAreTheReferences(t *testing.T) {
	p := Keepalive{}.ClientParameters()
	if p.Time != infinity {
		t.Errorf("no time: want infinity (no pings), got %v", p.Time)
	}
	if p.Timeout != 20*time.Second {
		t.Errorf("default timeout: want 20s, got %v", p.Timeout)
	}
	if p.PermitWithoutStream {
		t.Error("permitWithoutStream defaults to false")
	}
}

func TestKeepaliveTimeBelowTenSecondsIsRaised(t *testing.T) {
	for _, tc := range []struct {
		ms   int64
		want time.Duration
	}{{0, 10 * time.Second}, {1, 10 * time.Second}, {9999, 10 * time.Second}, {10000, 10 * time.Second}, {45000, 45 * time.Second}} {
		got := Keepalive{TimeMs: ptr(tc.ms)}.ClientParameters().Time
		if got != tc.want {
			t.Errorf("timeMs %d: want %v, got %v", tc.ms, tc.want, got)
		}
	}
}

func TestKeepaliveExplicitValues(t *testing.T) {
	p := Keepalive{TimeMs: ptr[int64](30000), TimeoutMs: ptr[int64](1500), PermitWithoutStream: ptr(true)}.ClientParameters()
	if p.Time != 30*time.Second || p.Timeout != 1500*time.Millisecond || !p.PermitWithoutStream {
		t.Errorf("got %+v", p)
	}
}

// fixture writes a context folder with a Dockerfile and a secret file.
func fixture(t *testing.T) (dir, dockerfile, secret string) {
	dir = t.TempDir()
	dockerfile = filepath.Join(dir, "Dockerfile")
	secret = filepath.Join(dir, "token")
	if err := os.WriteFile(dockerfile, []byte("FROM scratch\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(secret, []byte("s3cr3t"), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir, dockerfile, secret
}

func TestReadRequestAcceptsAFullRequest(t *testing.T) {
	dir, dockerfile, secret := fixture(t)
	in := `{"address":"tcp://127.0.0.1:1234","contextDir":"` + dir + `","dockerfile":"` + dockerfile + `",
	  "target":"prod","args":{"A":"1"},"secrets":{"token":"` + secret + `"},"noCache":true,
	  "cacheFrom":["localhost:5000/app:cache"],"exportCache":["localhost:5000/app:cache"],
	  "tags":["localhost:5000/app:1","localhost:5000/app:latest"],"labels":{"x.y":"z"},
	  "keepalive":{"timeMs":5000,"timeoutMs":3000,"permitWithoutStream":true}}`
	req, err := ReadRequest(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	opt := req.SolveOpt()
	if opt.Frontend != "dockerfile.v0" {
		t.Errorf("frontend %q", opt.Frontend)
	}
	want := map[string]string{"filename": "Dockerfile", "target": "prod", "no-cache": "", "build-arg:A": "1", "label:x.y": "z"}
	for k, v := range want {
		if got, ok := opt.FrontendAttrs[k]; !ok || got != v {
			t.Errorf("frontend attr %s: want %q, got %q (present %v)", k, v, got, ok)
		}
	}
	if len(opt.FrontendAttrs) != len(want) {
		t.Errorf("unexpected frontend attrs: %v", opt.FrontendAttrs)
	}
	if len(opt.Exports) != 1 || opt.Exports[0].Type != client.ExporterImage ||
		opt.Exports[0].Attrs["name"] != "localhost:5000/app:1,localhost:5000/app:latest" || opt.Exports[0].Attrs["push"] != "true" {
		t.Errorf("exports %+v", opt.Exports)
	}
	if len(opt.CacheImports) != 1 || opt.CacheImports[0].Type != "registry" || opt.CacheImports[0].Attrs["ref"] != "localhost:5000/app:cache" {
		t.Errorf("cache imports %+v", opt.CacheImports)
	}
	if len(opt.CacheExports) != 1 || opt.CacheExports[0].Attrs["mode"] != "max" || opt.CacheExports[0].Attrs["ref"] != "localhost:5000/app:cache" {
		t.Errorf("cache exports %+v", opt.CacheExports)
	}
	if p := req.Keepalive.ClientParameters(); p.Time != 10*time.Second || p.Timeout != 3*time.Second || !p.PermitWithoutStream {
		t.Errorf("keepalive %+v", p)
	}
}

func TestReadRequestRejects(t *testing.T) {
	dir, dockerfile, secret := fixture(t)
	base := func(extra string) string {
		return `{"address":"tcp://127.0.0.1:1234","contextDir":"` + dir + `","dockerfile":"` + dockerfile + `","tags":["r/a:1"]` + extra + `}`
	}
	for _, tc := range []struct{ name, in, want string }{
		{"not JSON", `tags`, "invalid request"},
		{"two values", base("") + base(""), "more than one JSON value"},
		{"unknown field", base(`,"tag":"x"`), `unknown field "tag"`},
		{"no address", strings.Replace(base(""), `tcp://127.0.0.1:1234`, ``, 1), "invalid daemon address"},
		{"address without scheme", strings.Replace(base(""), `tcp://127.0.0.1:1234`, `127.0.0.1:1234`, 1), "invalid daemon address"},
		{"address without port", strings.Replace(base(""), `tcp://127.0.0.1:1234`, `tcp://127.0.0.1`, 1), "expected tcp://HOST:PORT"},
		{"http address", strings.Replace(base(""), `tcp://127.0.0.1:1234`, `http://127.0.0.1:1234`, 1), "invalid daemon address"},
		{"relative context", strings.Replace(base(""), `"contextDir":"`+dir, `"contextDir":"ctx`, 1), "contextDir must be an absolute path"},
		{"missing context", strings.Replace(base(""), `"contextDir":"`+dir, `"contextDir":"`+dir+`/nope`, 1), "is not a folder"},
		{"missing Dockerfile", strings.Replace(base(""), dockerfile, dockerfile+".nope", 1), "does not exist"},
		{"no tags", strings.Replace(base(""), `"tags":["r/a:1"]`, `"tags":[]`, 1), "no tags"},
		{"comma in tag", strings.Replace(base(""), `"r/a:1"`, `"r/a:1,r/b:2"`, 1), "invalid image reference"},
		{"missing secret file", base(`,"secrets":{"token":"` + secret + `.nope"}`), "secret token: file"},
		{"bad arg name", base(`,"args":{"A=B":"1"}`), "invalid build argument name"},
		{"bad label name", base(`,"labels":{"":"1"}`), "invalid label name"},
		{"negative time", base(`,"keepalive":{"timeMs":-1}`), "timeMs must be 0 or more"},
		{"zero timeout", base(`,"keepalive":{"timeoutMs":0}`), "timeoutMs must be more than 0"},
		{"fractional time", base(`,"keepalive":{"timeMs":1.5}`), "invalid request"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadRequest(strings.NewReader(tc.in))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("want an error containing %q, got %v", tc.want, err)
			}
		})
	}
}

func TestReadRequestAcceptsUnixAddress(t *testing.T) {
	dir, dockerfile, _ := fixture(t)
	in := `{"address":"unix:///run/buildkit/buildkitd.sock","contextDir":"` + dir + `","dockerfile":"` + dockerfile + `","tags":["r/a:1"]}`
	if _, err := ReadRequest(strings.NewReader(in)); err != nil {
		t.Fatal(err)
	}
}

func TestDescribeNamesTheStepThePlaceAndTheExitCode(t *testing.T) {
	var v vertexNames
	d := digest.FromString("run")
	v.record(&client.SolveStatus{Vertexes: []*client.Vertex{{Digest: d, Name: "[2/3] RUN exit 3"}}})
	cause := &gatewaypb.ExitError{ExitCode: 3, Err: errors.New(`process "/bin/sh -c exit 3" did not complete successfully: exit code: 3`)}
	src := &errdefs.Source{Info: &pb.SourceInfo{Filename: "Dockerfile"}, Ranges: []*pb.Range{{Start: &pb.Position{Line: 4}}}}
	err := src.WrapError(errdefs.WrapVertex(cause, d))
	msg, code := describe(err, &v)
	want := `[2/3] RUN exit 3 (Dockerfile:4): process "/bin/sh -c exit 3" did not complete successfully: exit code: 3`
	if msg != want {
		t.Errorf("message:\n got %s\nwant %s", msg, want)
	}
	if code == nil || *code != 3 {
		t.Errorf("exit code %v", code)
	}
}

func TestDescribeIsOneLine(t *testing.T) {
	msg, code := describe(errors.New("failed to solve: dockerfile parse error\n  on line 2:\tunknown instruction: FOO"), &vertexNames{})
	if msg != "dockerfile parse error on line 2: unknown instruction: FOO" || code != nil {
		t.Errorf("got %q %v", msg, code)
	}
}

func TestUnreachableKeepsTheInnermostCause(t *testing.T) {
	err := unreachable("tcp://127.0.0.1:1", errors.New(`rpc error: code = Unavailable desc = connection error: desc = "transport: Error while dialing: dial tcp 127.0.0.1:1: connect: connection refused"`))
	want := "cannot reach the BuildKit daemon at tcp://127.0.0.1:1: dial tcp 127.0.0.1:1: connect: connection refused"
	if err.Error() != want {
		t.Errorf("got %s", err)
	}
}

func TestLineWriterEmitsWholeNonEmptyLines(t *testing.T) {
	var got []string
	w := &lineWriter{emit: func(s string) { got = append(got, s) }}
	_, _ = w.Write([]byte("#1 [1/2] FROM x\n\n#2 RUN ma"))
	_, _ = w.Write([]byte("ke\r\n#2 DONE"))
	w.flush()
	want := []string{"#1 [1/2] FROM x", "#2 RUN make", "#2 DONE"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("got %q", got)
	}
}

func TestNamedPipeAddressesOnWindowsOnly(t *testing.T) {
	if err := validateAddressOn("npipe:////./pipe/devtool-build-x1", "windows"); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ address, goos string }{
		{"npipe:////./pipe/devtool-build-x1", "linux"},
		{"npipe:////./pipe/devtool-build-x1", "darwin"},
		{"npipe://server/pipe/x", "windows"},
	} {
		if err := validateAddressOn(tc.address, tc.goos); err == nil || !strings.Contains(err.Error(), "expected npipe:////./pipe/NAME, on Windows") {
			t.Errorf("%s on %s: got %v", tc.address, tc.goos, err)
		}
	}
}
