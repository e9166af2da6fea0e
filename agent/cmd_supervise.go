//go:build linux

package agent

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"devtool.dev/agent/internal/config"
	"devtool.dev/agent/internal/perms"
	"devtool.dev/agent/internal/rescan"
	"devtool.dev/agent/internal/sshserver"
	"devtool.dev/agent/internal/supervisor"
	"devtool.dev/agent/internal/syncthingcfg"
)

// EnvSyncthingBin overrides where supervise finds Syncthing (default:
// next to this binary, where `install` put it).
const EnvSyncthingBin = "DEVTOOL_SYNCTHING_BIN"

// syncthingProgram is the Syncthing supervise runs, and its argv[0] ("": the
// path): $DEVTOOL_SYNCTHING_BIN, else the syncthing beside this binary, else
// (a host bundle copied in alone, see SyncthingInside) this binary itself,
// run under the name syncthing.
func syncthingProgram(self, explicit string) (path, argv0 string) {
	if explicit != "" {
		return explicit, ""
	}
	beside := filepath.Join(filepath.Dir(self), "syncthing")
	if _, err := os.Stat(beside); err != nil && SyncthingInside {
		return self, "syncthing"
	}
	return beside, ""
}

// EnvKeepBinaries names a folder (on the dev container's volume) that
// supervise copies this agent and Syncthing into, in the background, for
// the next dev pod to run without an init container.
const EnvKeepBinaries = "DEVTOOL_KEEP_BINARIES"

func runSupervise(args []string) error {
	fs := flag.NewFlagSet("supervise", flag.ContinueOnError)
	state := fs.String("state", "", "state directory (default $DEVTOOL_STATE, the contract's stateDir, or "+config.DefaultStateDir+")")
	noSSH := fs.Bool("no-ssh", false, "do not run the SSH server")
	noSync := fs.Bool("no-syncthing", false, "do not run Syncthing")
	stopTimeout := fs.Duration("stop-timeout", 10*time.Second, "how long children get to exit after SIGTERM before SIGKILL")
	backoffMin := fs.Duration("backoff-min", time.Second, "first restart delay of a crashed agent")
	backoffMax := fs.Duration("backoff-max", 30*time.Second, "longest restart delay")
	if err := fs.Parse(args); err != nil {
		return err
	}
	userCmd := fs.Args() // flag stops at "--" and drops it

	var cfg *config.Config
	if !*noSSH || !*noSync {
		path, err := config.Path()
		if err != nil {
			return err
		}
		if cfg, err = config.Load(path); err != nil {
			return err
		}
		if !*noSSH {
			if err := cfg.ValidateSSH(); err != nil {
				return err
			}
		}
		if !*noSync {
			if err := cfg.ValidateSyncthing(); err != nil {
				return err
			}
		}
	}
	stateDir := *state
	if stateDir == "" {
		stateDir = cfg.StateDirectory()
	}
	logDir := filepath.Join(stateDir, "logs")
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		return unwritableState(stateDir, err)
	}

	// The supervisor's own events go to the container log (kubectl logs)
	// and to a file on the PVC that survives restarts (devtool doctor).
	own, err := supervisor.OpenRotating(filepath.Join(logDir, "supervisor.log"), 1<<20, 2)
	if err != nil {
		return err
	}
	defer own.Close()
	logger := log.New(io.MultiWriter(os.Stderr, own), "devtool-agent: ", log.LstdFlags)
	// Before any child starts: the SSH server's sessions and Syncthing inherit it.
	if home, replaced, err := ensureHome(stateDir); err != nil {
		logger.Printf("no writable home for uid %d: %v", os.Getuid(), err)
	} else if replaced {
		logger.Printf("HOME=%s (the image's user has no writable home)", home)
	}
	if home, err := os.UserHomeDir(); err == nil {
		if line, err := ensurePasswdEntry(passwdFile, os.Getuid(), os.Getgid(), home, sshserver.DefaultShell()); err != nil {
			logger.Printf("cannot give uid %d a name in %s: %v", os.Getuid(), passwdFile, err)
		} else if line != "" {
			logger.Printf("added %q to %s (uid %d had no entry; the image lets group %d write it)", line, passwdFile, os.Getuid(), os.Getgid())
		}
	}
	if tmp, replaced, err := ensureTmp(stateDir); err != nil {
		logger.Printf("no writable temporary folder for uid %d: %v", os.Getuid(), err)
	} else if replaced {
		logger.Printf("TMPDIR=%s (/tmp is not writable)", tmp)
	}

	self, err := os.Executable()
	if err != nil {
		return err
	}
	// $DEVTOOL_KEEP_BINARIES, not a flag: an older agent started by a newer CLI ignores it
	// (a flag it does not know would stop it), and the CLI copes with the copy missing.
	if keep := os.Getenv(EnvKeepBinaries); keep != "" {
		// In the background: the copy (tens of MB) must not delay SSH and Syncthing.
		go func() {
			if err := keepBinaries(filepath.Dir(self), keep); err != nil {
				logger.Printf("cannot keep the agent in %s for the next dev pod: %v", keep, err)
			}
		}()
	}
	var specs []supervisor.Spec
	if !*noSync {
		bin, argv0 := syncthingProgram(self, os.Getenv(EnvSyncthingBin))
		home := filepath.Join(stateDir, "syncthing")
		specs = append(specs, supervisor.Spec{
			Name: "syncthing", Path: bin, Argv0: argv0, Args: syncthingcfg.Args(home),
			Env:     append(os.Environ(), syncthingcfg.Env()...),
			Restart: true, LogToFile: true, OwnGroup: true,
			// Regenerated before every start: the contract is the truth.
			PreStart: func() error {
				openFolders(cfg.Syncthing.Folders, logger.Printf)
				id, err := syncthingcfg.WriteHome(home, unsettledReceiveOnly(cfg.Syncthing, stateDir, logger.Printf))
				if err == nil {
					logger.Printf("syncthing: device %s, config in %s", id, home)
				}
				return err
			},
		})
	}
	if !*noSSH {
		specs = append(specs, supervisor.Spec{
			Name: "ssh", Path: self, Args: []string{"ssh"},
			Restart: true, LogToFile: true, OwnGroup: true,
		})
	}
	if len(userCmd) > 0 {
		path, err := exec.LookPath(userCmd[0])
		if err != nil {
			return fmt.Errorf("command: %w", err)
		}
		specs = append(specs, supervisor.Spec{
			Name: "command", Path: path, Args: userCmd[1:],
			// On a terminal (kubectl attach) the command must stay in our
			// foreground process group to be allowed to read it.
			OwnGroup: !stdinIsTerminal(),
		})
	}

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	sup := supervisor.New(supervisor.Options{
		LogDir:        logDir,
		BackoffMin:    *backoffMin,
		BackoffMax:    *backoffMax,
		StopTimeout:   *stopTimeout,
		Logf:          logger.Printf,
		KillAllOnStop: os.Getpid() == 1,
	}, specs...)
	logger.Printf("%s supervising (pid %d, uid %d, state %s)", version, os.Getpid(), os.Getuid(), stateDir)

	// Container -> laptop latency: Syncthing's own watcher waits at least
	// a second before scanning; the rescanner has it scan changed paths
	// within milliseconds (see internal/rescan).
	bgCtx, stopBackground := context.WithCancel(ctx)
	var background sync.WaitGroup
	if !*noSync {
		background.Go(func() {
			rescan.Run(bgCtx, rescan.Options{
				Folders:    cfg.Syncthing.Folders,
				GUIAddress: cfg.Syncthing.GUIAddress,
				APIKey:     cfg.Syncthing.APIKey,
				Logf:       logger.Printf,
			})
		})
		// Folders that ignore permissions (the CLI's remote end): the
		// laptop's bits are still applied here (see internal/perms).
		selfID, _ := syncthingcfg.DeviceIDFromCertPEM(cfg.Syncthing.Certificate)
		background.Go(func() {
			perms.Run(bgCtx, perms.Options{
				Folders:      cfg.Syncthing.Folders,
				GUIAddress:   cfg.Syncthing.GUIAddress,
				APIKey:       cfg.Syncthing.APIKey,
				SelfDeviceID: selfID,
				Logf:         logger.Printf,
			})
		})
	}
	err = sup.Run(ctx)
	stopBackground()
	background.Wait()
	return err
}

// openFolders makes each synced folder's root readable and searchable by
// every user of the container. Its content gets the permissions of the
// laptop's files, but the root is a volume directory (often 0750, root-owned
// on host-path storage), and the app may run as another user than the agent
// (nginx workers as www-data): it must be able to read the synced code.
func openFolders(folders []config.Folder, logf func(string, ...any)) {
	for _, f := range folders {
		info, err := os.Stat(f.Path)
		if err != nil || !info.IsDir() {
			continue // Syncthing reports (and creates) a missing folder itself
		}
		if mode := info.Mode().Perm(); mode&0o005 != 0o005 {
			if err := os.Chmod(f.Path, mode|0o755); err != nil {
				logf("syncthing: cannot open %s to other users (%v); the app may not read it if it runs as another user", f.Path, err)
			}
		}
	}
}

func stdinIsTerminal() bool {
	_, err := unix.IoctlGetTermios(0, unix.TCGETS)
	return err == nil
}
