package sshserver

import (
	"os"
	"os/exec"
	"syscall"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"
)

// startPTY starts cmd on a new pseudo-terminal as the leader of a new
// session (so the terminal is its controlling tty, job control works and
// the kernel hangs the session up when the terminal closes).
//
// creack/pty hands back the master in blocking mode (its ioctls use
// File.Fd), where Close cannot interrupt a pending Read: a background job
// that keeps the terminal open would pin our copier forever. We re-wrap a
// non-blocking duplicate so the runtime poller owns it and Close works.
func startPTY(cmd *exec.Cmd, cols, rows uint32) (*os.File, error) {
	ws := &pty.Winsize{Cols: uint16(cols), Rows: uint16(rows)}
	master, err := pty.StartWithAttrs(cmd, ws, &syscall.SysProcAttr{Setsid: true, Setctty: true})
	if err != nil {
		return nil, err
	}
	defer master.Close()
	fd, err := unix.Dup(int(master.Fd()))
	if err != nil {
		return nil, err
	}
	unix.CloseOnExec(fd)
	if err := unix.SetNonblock(fd, true); err != nil {
		unix.Close(fd)
		return nil, err
	}
	return os.NewFile(uintptr(fd), "ptmx"), nil
}

// control runs fn on f's descriptor without switching it to blocking mode.
func control(f *os.File, fn func(fd int) error) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var ferr error
	if err := rc.Control(func(fd uintptr) { ferr = fn(int(fd)) }); err != nil {
		return err
	}
	return ferr
}

func setWinsize(f *os.File, cols, rows, wpx, hpx uint32) error {
	return control(f, func(fd int) error {
		return unix.IoctlSetWinsize(fd, unix.TIOCSWINSZ, &unix.Winsize{
			Col: uint16(cols), Row: uint16(rows), Xpixel: uint16(wpx), Ypixel: uint16(hpx),
		})
	})
}

// foregroundPgrp is the terminal's foreground process group: where a
// signal request goes, as Ctrl-C on a real terminal would.
func foregroundPgrp(f *os.File) (int, error) {
	var pgrp int
	err := control(f, func(fd int) error {
		var err error
		pgrp, err = unix.IoctlGetInt(fd, unix.TIOCGPGRP)
		return err
	})
	return pgrp, err
}
