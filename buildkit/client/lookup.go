package buildkitclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/moby/buildkit/client"
	"github.com/moby/buildkit/client/llb"
	"github.com/moby/buildkit/session"
	"github.com/moby/buildkit/util/grpcerrors"
	"google.golang.org/grpc/codes"
)

// How long a lookup may take in all: a hosted builder may first start the
// user's daemon (up to a minute), then the registry is asked once.
const lookupTimeout = 90 * time.Second

// Lookup is the one JSON line `devtool-buildkit lookup ADDRESS IMAGE` writes:
// whether the daemon finds IMAGE in its registry.
type Lookup struct {
	State  string `json:"state"` // "present", "absent" or "unknown"
	Reason string `json:"reason,omitempty"`
}

// lookupCommand asks the daemon at address whether image is in its registry,
// as the daemon reaches that registry: the hosted builder reaches a
// node-local registry that a pipeline runner's pod cannot. It is a solve of
// the image alone with no exporter: the daemon resolves the manifest (with
// the session's registry credentials) and pulls no layer.
func lookupCommand(address, image string, stdout io.Writer) int {
	if err := validateAddress(address); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	if image == "" || strings.ContainsAny(image, " \t\n") {
		fmt.Fprintf(os.Stderr, "invalid image reference %q\n", image)
		return 2
	}
	ctx, cancel := context.WithTimeout(context.Background(), lookupTimeout)
	defer cancel()
	answer := lookup(ctx, address, image)
	_ = json.NewEncoder(stdout).Encode(answer)
	return 0
}

func lookup(ctx context.Context, address, image string) Lookup {
	c, err := connect(ctx, &Request{Address: address})
	if err != nil {
		return Lookup{State: "unknown", Reason: err.Error()}
	}
	defer c.Close()
	def, err := llb.Image(image).Marshal(ctx)
	if err != nil {
		return Lookup{State: "unknown", Reason: oneLine(err.Error())}
	}
	_, err = c.Solve(ctx, def, client.SolveOpt{Session: []session.Attachable{registryAuth(io.Discard)}}, nil)
	return lookupAnswer(err, ctx.Err())
}

// lookupAnswer reads the solve's outcome: success means the manifest was
// found, the registry's "not found" means absent, anything else (refused,
// unauthorized, a timeout) cannot tell.
func lookupAnswer(err, ctxErr error) Lookup {
	switch {
	case err == nil:
		return Lookup{State: "present"}
	case errors.Is(ctxErr, context.DeadlineExceeded):
		return Lookup{State: "unknown", Reason: fmt.Sprintf("no answer within %s", lookupTimeout)}
	case grpcerrors.Code(err) == codes.NotFound || strings.HasSuffix(strings.TrimSpace(err.Error()), ": not found"):
		return Lookup{State: "absent"}
	default:
		return Lookup{State: "unknown", Reason: oneLine(err.Error())}
	}
}
