module devtool.dev/agent

go 1.26.0

require (
	github.com/creack/pty v1.1.24
	github.com/fsnotify/fsnotify v1.10.1
	github.com/pkg/sftp v1.13.12
	golang.org/x/crypto v0.58.0
	golang.org/x/sys v0.49.0
)

require github.com/kr/fs v0.1.0 // indirect
