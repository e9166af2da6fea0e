// Package buildkitclient is devtool-buildkit, which builds and pushes one image
// on a BuildKit daemon for `devtool build` (its command is cmd/devtool-buildkit;
// the host bundle, agent/host/, links it in too). It reads one JSON request
// on stdin and writes JSON lines on stdout: {"log": "..."} per progress line, then {"result": {...}}
// or {"error": "...", "exitCode": n}. The protocol is in buildkit/README.md.
//
// It is a Go program because BuildKit's session protocol (the build
// context's file sync, secrets) is implemented only by BuildKit's Go client.
package buildkitclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	dockerconfig "github.com/docker/cli/cli/config"
	controlapi "github.com/moby/buildkit/api/services/control"
	"github.com/moby/buildkit/client"
	"github.com/moby/buildkit/session"
	"github.com/moby/buildkit/session/auth/authprovider"
	"github.com/moby/buildkit/session/secrets/secretsprovider"
	"github.com/tonistiigi/fsutil"
	"google.golang.org/grpc"
)

// Set by buildkit/build.sh (-X devtool.dev/buildkit/client.buildkitVersion=...).
var buildkitVersion = "unknown"

// Git's own files anywhere in the context: a repository's .git folder, a submodule's .git file.
var gitExcludes = []string{".git", "**/.git"}

// How long connecting to the daemon may take before the build fails.
const dialTimeout = 10 * time.Second

// Main runs devtool-buildkit with os.Args and exits.
func Main() {
	if len(os.Args) > 1 {
		os.Exit(command(os.Args[1:]))
	}
	out := &output{enc: json.NewEncoder(os.Stdout)}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	req, err := ReadRequest(os.Stdin)
	if err != nil {
		out.fail(err.Error(), nil)
		os.Exit(1)
	}
	digest, err := run(ctx, req, out)
	if err != nil {
		if ctx.Err() != nil {
			out.fail("build interrupted", nil)
		} else {
			msg, code := describe(err, &out.vertices)
			out.fail(msg, code)
		}
		os.Exit(1)
	}
	out.write(map[string]any{"result": map[string]string{"digest": digest}})
}

// output writes the JSON lines; progress and the final line come from
// different goroutines.
type output struct {
	mu       sync.Mutex
	enc      *json.Encoder
	vertices vertexNames
}

func (o *output) write(v any) {
	o.mu.Lock()
	defer o.mu.Unlock()
	_ = o.enc.Encode(v)
}

func (o *output) log(line string) { o.write(map[string]string{"log": line}) }

func (o *output) fail(msg string, exitCode *uint32) {
	e := map[string]any{"error": msg}
	if exitCode != nil {
		e["exitCode"] = *exitCode
	}
	o.write(e)
}

func run(ctx context.Context, req *Request, out *output) (string, error) {
	c, err := connect(ctx, req)
	if err != nil {
		return "", err
	}
	defer c.Close()

	opt := req.SolveOpt()
	contextFS, err := fsutil.NewFS(req.ContextDir)
	if err != nil {
		return "", fmt.Errorf("build context %s: %w", req.ContextDir, err)
	}
	// Git's files are never part of the context (the CLI's content tag leaves them out too: they
	// change with every commit). The frontend applies .dockerignore over what is left.
	contextFS, err = fsutil.NewFilterFS(contextFS, &fsutil.FilterOpt{ExcludePatterns: gitExcludes})
	if err != nil {
		return "", fmt.Errorf("build context %s: %w", req.ContextDir, err)
	}
	dockerfileFS, err := fsutil.NewFS(filepath.Dir(req.Dockerfile))
	if err != nil {
		return "", fmt.Errorf("Dockerfile folder %s: %w", filepath.Dir(req.Dockerfile), err)
	}
	opt.LocalMounts = map[string]fsutil.FS{"context": contextFS, "dockerfile": dockerfileFS}
	var sources []secretsprovider.Source
	for _, id := range sortedKeys(req.Secrets) {
		sources = append(sources, secretsprovider.Source{ID: id, FilePath: req.Secrets[id]})
	}
	store, err := secretsprovider.NewStore(sources)
	if err != nil {
		return "", fmt.Errorf("build secrets: %w", err)
	}
	opt.Session = []session.Attachable{secretsprovider.NewSecretProvider(store), registryAuth(os.Stderr)}

	statuses := make(chan *client.SolveStatus)
	progress := make(chan error, 1)
	go func() { progress <- out.showProgress(statuses) }()
	resp, err := c.Solve(ctx, nil, opt, statuses) // closes statuses when done
	if perr := <-progress; err == nil && perr != nil {
		return "", perr
	}
	if err != nil {
		return "", err
	}
	return resp.ExporterResponse["containerimage.digest"], nil
}

// registryAuth serves registry credentials as `docker login` keeps them
// ($DOCKER_CONFIG, credential helpers), as buildctl and buildx send them; the
// daemon asks for them when it pulls, pushes or imports cache. Problems reading
// the config file are written to warnings.
func registryAuth(warnings io.Writer) session.Attachable {
	return authprovider.NewDockerAuthProvider(authprovider.DockerAuthProviderConfig{
		AuthConfigProvider: authprovider.LoadAuthConfig(dockerconfig.LoadDefaultConfigFile(warnings)),
	})
}

// connect dials the daemon and checks that it answers, within dialTimeout:
// gRPC dials lazily, so an unreachable address would otherwise surface only
// as a failed solve, or never on an address that drops packets.
func connect(ctx context.Context, req *Request) (*client.Client, error) {
	dctx, cancel := context.WithTimeout(ctx, dialTimeout)
	defer cancel()
	c, err := client.New(dctx, req.Address, client.WithGRPCDialOption(grpc.WithKeepaliveParams(req.Keepalive.ClientParameters())))
	if err != nil {
		return nil, unreachable(req.Address, err)
	}
	if _, err := c.ControlClient().Info(dctx, &controlapi.InfoRequest{}); err != nil {
		c.Close()
		if errors.Is(dctx.Err(), context.DeadlineExceeded) {
			return nil, unreachable(req.Address, fmt.Errorf("no answer within %s", dialTimeout))
		}
		return nil, unreachable(req.Address, err)
	}
	return c, nil
}

// command runs the few commands meant for people and scripts:
// `version`, `ping ADDRESS` (buildkit/buildkitd.sh's health check: the
// daemon answers and has a worker) and `lookup ADDRESS IMAGE` (lookup.go).
func command(args []string) int {
	switch {
	case len(args) == 1 && (args[0] == "version" || args[0] == "--version"):
		fmt.Printf("devtool-buildkit (github.com/moby/buildkit %s)\n", buildkitVersion)
		return 0
	case len(args) == 2 && args[0] == "ping":
		if err := validateAddress(args[1]); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		ctx, cancel := context.WithTimeout(context.Background(), dialTimeout)
		defer cancel()
		c, err := connect(ctx, &Request{Address: args[1]})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer c.Close()
		info, err := c.Info(ctx)
		if err != nil {
			fmt.Fprintln(os.Stderr, oneLine(err.Error()))
			return 1
		}
		workers, err := c.ListWorkers(ctx)
		if err != nil || len(workers) == 0 {
			fmt.Fprintf(os.Stderr, "the daemon at %s has no worker (%v)\n", args[1], err)
			return 1
		}
		fmt.Printf("buildkitd %s at %s, %d worker(s)\n", info.BuildkitVersion.Version, args[1], len(workers))
		return 0
	case len(args) == 3 && args[0] == "lookup":
		return lookupCommand(args[1], args[2], os.Stdout)
	}
	fmt.Fprintln(os.Stderr, "usage: devtool-buildkit < request.json | devtool-buildkit ping ADDRESS | devtool-buildkit lookup ADDRESS IMAGE | devtool-buildkit version")
	return 2
}

type unreachableError struct{ msg string }

func (e *unreachableError) Error() string { return e.msg }

func unreachable(address string, err error) error {
	cause := oneLine(err.Error())
	// gRPC's "rpc error: code = Unavailable desc = connection error: desc = ..."
	// wrapping says nothing to a user; keep the innermost cause.
	if i := strings.LastIndex(cause, "desc = "); i >= 0 {
		cause = strings.Trim(cause[i+len("desc = "):], `" `)
	}
	cause = strings.TrimPrefix(cause, "transport: Error while dialing: ")
	return &unreachableError{fmt.Sprintf("cannot reach the BuildKit daemon at %s: %s", address, cause)}
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
