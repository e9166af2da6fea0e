//go:build tools

// Package tools only records the Kubernetes commands this module builds, so
// that `go mod tidy` keeps every dependency they need in go.mod/go.sum.
// Nothing here is compiled; cluster/lib/build.sh runs
// `go build k8s.io/kubernetes/cmd/<name>` inside this module.
package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-proxy"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubectl"
	_ "k8s.io/kubernetes/cmd/kubelet"
)
