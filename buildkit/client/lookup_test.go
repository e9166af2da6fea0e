package buildkitclient

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

func TestLookupAnswer(t *testing.T) {
	missing := errors.New("failed to solve: localhost:5000/web:devtool-1: not found")
	cases := []struct {
		name   string
		err    error
		ctxErr error
		want   string
	}{
		{"the manifest resolved", nil, nil, "present"},
		{"the registry has no such tag", missing, nil, "absent"},
		{"a NotFound status", status.Error(codes.NotFound, "manifest unknown"), nil, "absent"},
		{"the registry refused the connection", errors.New("failed to do request: dial tcp 127.0.0.1:5001: connect: connection refused"), nil, "unknown"},
		{"unauthorized", fmt.Errorf("failed to authorize: 401 Unauthorized"), nil, "unknown"},
		{"the time ran out", context.DeadlineExceeded, context.DeadlineExceeded, "unknown"},
	}
	for _, c := range cases {
		if got := lookupAnswer(c.err, c.ctxErr); got.State != c.want {
			t.Errorf("%s: state %q, want %q (%+v)", c.name, got.State, c.want, got)
		}
	}
	if got := lookupAnswer(context.DeadlineExceeded, context.DeadlineExceeded); got.Reason != "no answer within 1m30s" {
		t.Errorf("timeout reason %q", got.Reason)
	}
}
