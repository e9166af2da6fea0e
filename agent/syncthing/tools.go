//go:build tools

// Package tools pins Syncthing's command for `go mod tidy` and `go build`;
// this file itself is never compiled (see ../build.sh for the build).
package tools

import _ "github.com/syncthing/syncthing/cmd/syncthing"
