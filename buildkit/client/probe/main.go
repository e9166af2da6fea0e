// probe calls BuildKit control methods a build never needs, on the daemon at
// ADDRESS, and prints one JSON line per call: whether the daemon answered or
// the gRPC status that refused it. Test only (test/e2e/service-build-tenants.e2e.test.ts):
// a user's raw call through the hosted build tunnel.
//
//	go run ./probe tcp://127.0.0.1:PORT
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"time"

	controlapi "github.com/moby/buildkit/api/services/control"
	"github.com/moby/buildkit/client"
	"google.golang.org/grpc/status"
)

type outcome struct {
	Method string `json:"method"`
	OK     bool   `json:"ok"`
	Code   string `json:"code,omitempty"`
	Error  string `json:"error,omitempty"`
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: probe ADDRESS")
		os.Exit(2)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := client.New(ctx, os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer c.Close()
	calls := []struct {
		method string
		call   func() error
	}{
		{"DiskUsage", func() error { _, err := c.DiskUsage(ctx); return err }},
		{"ListenBuildHistory", func() error {
			stream, err := c.ControlClient().ListenBuildHistory(ctx, &controlapi.BuildHistoryRequest{EarlyExit: true})
			if err != nil {
				return err
			}
			_, err = stream.Recv()
			if err != nil && err.Error() == "EOF" {
				return nil
			}
			return err
		}},
		// Prune with a filter that matches nothing: refused or harmless.
		{"Prune", func() error {
			return c.Prune(ctx, nil, client.WithFilter([]string{"id==devtool-probe-matches-nothing"}))
		}},
	}
	for _, call := range calls {
		err := call.call()
		o := outcome{Method: call.method, OK: err == nil}
		if err != nil {
			o.Code = status.Code(err).String()
			o.Error = err.Error()
		}
		line, _ := json.Marshal(o)
		fmt.Println(string(line))
	}
}
