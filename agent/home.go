//go:build linux

package agent

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"
)

// EnvHome is the home directory the user's commands, the shell and
// Syncthing get.
const EnvHome = "HOME"

// ensureHome gives the container a home it can write. An image's user
// without an /etc/passwd entry (uid 1000 in an image that never created
// it, or the random uid OpenShift assigns) gets HOME=/ from the runtime,
// and a user whose home was never created gets a HOME that does not
// exist: shells, git, npm and go then fail to write their files there.
// Such a HOME is replaced by a folder in the state directory, which is on
// the dev container's volume (kept across restarts) and writable by this
// uid. A HOME that exists and is writable is left alone. Returns the home
// and whether it was replaced.
func ensureHome(stateDir string) (string, bool, error) {
	if home := os.Getenv(EnvHome); home != "" && writableDir(home) {
		return home, false, nil
	}
	home := filepath.Join(stateDir, "home")
	if err := os.MkdirAll(home, 0o700); err != nil {
		return "", false, err
	}
	return home, true, os.Setenv(EnvHome, home)
}

// ensureTmp gives a container whose /tmp cannot be written (a read-only
// root file system, as hardened pods ask) a TMPDIR in the state
// directory: compilers, package managers and mktemp need one. A TMPDIR
// already set, or a writable /tmp, is left alone.
func ensureTmp(stateDir string) (string, bool, error) {
	if tmp := os.Getenv("TMPDIR"); tmp != "" {
		return tmp, false, nil
	}
	if writableDir(os.TempDir()) {
		return os.TempDir(), false, nil
	}
	tmp := filepath.Join(stateDir, "tmp")
	if err := os.MkdirAll(tmp, 0o700); err != nil {
		return "", false, err
	}
	return tmp, true, os.Setenv("TMPDIR", tmp)
}

func writableDir(path string) bool {
	info, err := os.Stat(path)
	return err == nil && info.IsDir() && unix.Access(path, unix.W_OK|unix.X_OK) == nil
}

// ExitStateUnwritable is supervise's exit code when its state directory
// cannot be written: the CLI reads it from the dev container's status and
// moves the dev container's files off that volume (src/dev/activate.ts).
// 73 is sysexits' EX_CANTCREAT.
const ExitStateUnwritable = 73

// stateUnwritableError says why the state directory cannot be written and
// what to change. The usual cause with a non-root image: the volume's
// storage does not apply the pod's fsGroup (hostPath volumes, the in-tree
// host-path provisioner, some NFS), so its folders stay root's with no write
// for the group the pod was given.
type stateUnwritableError struct {
	msg string
	err error
}

func (e *stateUnwritableError) Error() string { return e.msg }
func (e *stateUnwritableError) Unwrap() error { return e.err }
func (e *stateUnwritableError) ExitCode() int { return ExitStateUnwritable }

func unwritableState(stateDir string, err error) error {
	owner := ""
	if info, statErr := os.Stat(stateDir); statErr == nil {
		if st, ok := info.Sys().(*syscall.Stat_t); ok {
			owner = fmt.Sprintf(" (owner %d:%d, mode %04o)", st.Uid, st.Gid, info.Mode().Perm())
		}
	}
	groups, _ := os.Getgroups()
	return &stateUnwritableError{err: err, msg: fmt.Sprintf("state directory %s%s is not writable by uid %d gid %d groups %v (%v): its volume ignores the pod's "+
		"securityContext.fsGroup (as hostPath storage does); use a storage class that applies fsGroup, or persistentVolume.enabled: false "+
		"in the manifest", stateDir, owner, os.Getuid(), os.Getgid(), groups, err)}
}
