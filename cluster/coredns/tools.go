//go:build tools

// Package tools records the CoreDNS main package for `go mod tidy`; it is
// never compiled itself.
package tools

import _ "github.com/coredns/coredns"
