//go:build tools

// Package tools records the local-path-provisioner main package for
// `go mod tidy`; it is never compiled itself.
package tools

import _ "github.com/rancher/local-path-provisioner"
