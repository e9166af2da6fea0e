package main

import (
	"context"
	"errors"
	"io"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// buildMethods are the gRPC methods a build needs (what devtool-buildkit
// calls: Info to check the daemon, Solve with its Status stream and the
// Session that carries the context, secrets and registry credentials).
// Everything else of BuildKit's API (Prune, DiskUsage, build history,
// ListWorkers' siblings, the frontend bridge) is refused.
var buildMethods = map[string]bool{
	"/moby.buildkit.v1.Control/Info":        true,
	"/moby.buildkit.v1.Control/ListWorkers": true,
	"/moby.buildkit.v1.Control/Solve":       true,
	"/moby.buildkit.v1.Control/Status":      true,
	"/moby.buildkit.v1.Control/Session":     true,
}

// allowed reports whether a call of method may reach a tenant's daemon.
func allowed(method string) bool { return buildMethods[method] }

// rawCodec passes messages through as the bytes they arrived as: the
// gateway never decodes a build's messages.
type rawCodec struct{}

func (rawCodec) Marshal(v any) ([]byte, error) {
	b, ok := v.(*[]byte)
	if !ok {
		return nil, status.Errorf(codes.Internal, "raw codec: unexpected %T", v)
	}
	return *b, nil
}

func (rawCodec) Unmarshal(data []byte, v any) error {
	b, ok := v.(*[]byte)
	if !ok {
		return status.Errorf(codes.Internal, "raw codec: unexpected %T", v)
	}
	*b = append((*b)[:0], data...)
	return nil
}

func (rawCodec) Name() string { return "proto" }

// daemons hands out the connection to a tenant's own daemon; release
// says the call ended (the daemon may stop once it has none).
type daemons interface {
	acquire(ctx context.Context, tenant string) (conn *grpc.ClientConn, release func(), err error)
}

// forward is the server's handler for every method: an allowed call is
// streamed, message by message and with its metadata, to the calling
// tenant's daemon; any other is refused with PermissionDenied.
func forward(d daemons) grpc.StreamHandler {
	return func(_ any, server grpc.ServerStream) error {
		method, _ := grpc.MethodFromServerStream(server)
		if !allowed(method) {
			return status.Errorf(codes.PermissionDenied, "%s is not available through devtool's build tunnel", method)
		}
		tenant, err := tenantOf(server.Context())
		if err != nil {
			return err
		}
		conn, release, err := d.acquire(server.Context(), tenant)
		if err != nil {
			return err
		}
		defer release()
		ctx, cancel := context.WithCancel(server.Context())
		defer cancel()
		md, _ := metadata.FromIncomingContext(ctx)
		ctx = metadata.NewOutgoingContext(ctx, forwardable(md))
		client, err := conn.NewStream(ctx, &grpc.StreamDesc{ClientStreams: true, ServerStreams: true}, method, grpc.ForceCodec(rawCodec{}))
		if err != nil {
			return err
		}
		up := make(chan error, 1)
		go func() { up <- pumpUp(server, client) }()
		down := make(chan error, 1)
		go func() { down <- pumpDown(client, server) }()
		for {
			select {
			case err := <-up:
				if err != nil {
					cancel()
					return status.Errorf(codes.Canceled, "the client's stream ended: %v", err)
				}
				up = nil // the client sent all it had; the daemon's answer continues
			case err := <-down:
				server.SetTrailer(client.Trailer())
				if errors.Is(err, io.EOF) {
					return nil
				}
				return err
			}
		}
	}
}

// forwardable drops the HTTP/2 pseudo-headers and transport headers gRPC
// sets itself.
func forwardable(md metadata.MD) metadata.MD {
	out := metadata.MD{}
	for k, v := range md {
		if strings.HasPrefix(k, ":") || k == "content-type" || k == "user-agent" || k == "te" || strings.HasPrefix(k, "grpc-") {
			continue
		}
		out[k] = v
	}
	return out
}

// pumpUp copies the client's messages to the daemon; nil when the client
// closed its side.
func pumpUp(server grpc.ServerStream, client grpc.ClientStream) error {
	for {
		var msg []byte
		if err := server.RecvMsg(&msg); err != nil {
			if errors.Is(err, io.EOF) {
				return client.CloseSend()
			}
			return err
		}
		if err := client.SendMsg(&msg); err != nil {
			return nil // the daemon's side ended: pumpDown reports how
		}
	}
}

// pumpDown copies the daemon's header and messages to the client; io.EOF
// when the daemon finished the call, else the daemon's status.
func pumpDown(client grpc.ClientStream, server grpc.ServerStream) error {
	header, err := client.Header()
	if err != nil {
		return err
	}
	if err := server.SendHeader(header); err != nil {
		return err
	}
	for {
		var msg []byte
		if err := client.RecvMsg(&msg); err != nil {
			return err
		}
		if err := server.SendMsg(&msg); err != nil {
			return err
		}
	}
}
