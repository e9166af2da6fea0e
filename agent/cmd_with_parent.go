//go:build !windows

package agent

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"syscall"
)

// runWithParent replaces itself with PROGRAM, which then gets SIGTERM when
// the process PPID ends, however it ends. The CLI starts its local Syncthing
// this way: an `up` that is killed (SIGKILL, or Ctrl-C before it could clean
// up) must not leave a Syncthing running on this machine with nobody to stop it.
//
//	devtool-agent with-parent PPID -- PROGRAM [ARGS...]
func runWithParent(args []string) error {
	if len(args) < 3 || args[1] != "--" {
		return errors.New("usage: devtool-agent with-parent PPID -- PROGRAM [ARGS...]")
	}
	ppid, err := strconv.Atoi(args[0])
	if err != nil || ppid <= 0 {
		return fmt.Errorf("PPID %q is not a process ID", args[0])
	}
	program, err := exec.LookPath(args[2])
	if err != nil {
		return err
	}
	// Set before the check: a parent that ends between the two is seen by the check.
	if err := dieWithParent(); err != nil {
		return err
	}
	if os.Getppid() != ppid {
		return fmt.Errorf("process %d, which started this, has already ended", ppid)
	}
	return syscall.Exec(program, args[2:], os.Environ())
}
