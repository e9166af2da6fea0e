//go:build tools

// Package tools records the crane command for `go mod tidy`; it is never
// compiled itself.
package tools

import _ "github.com/google/go-containerregistry/cmd/crane"
