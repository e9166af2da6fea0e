package agent

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// dieWithParent asks the kernel for SIGTERM when the parent ends; the setting
// survives exec (of a program without set-user-ID or capabilities).
func dieWithParent() error {
	return unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(syscall.SIGTERM), 0, 0, 0)
}
