//go:build tools

// Package tools only records the buildkitd command this module builds, so
// that `go mod tidy` keeps every dependency it needs in go.mod/go.sum.
// Nothing here is compiled; buildkit/build.sh runs
// `go build github.com/moby/buildkit/cmd/buildkitd` inside this module.
package tools

import _ "github.com/moby/buildkit/cmd/buildkitd"
