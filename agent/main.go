// Package agent is devtool-agent, the program that runs inside devtool's dev
// containers (its command is cmd/devtool-agent; the host bundle, host/, links it
// in too). One static binary does everything, because the image it ships in is
// FROM scratch and the dev container's own image may have no shell or tools:
//
//	install DIR        copy the agent and Syncthing into DIR (init container)
//	supervise [-- CMD] PID 1 of the dev container: Syncthing, SSH, CMD
//	ssh                the SSH server (started by supervise)
//	syncthing-config   write a Syncthing home from the contract
//	keygen             print fresh keys for a contract, as JSON
//	untar DIR          extract a tar stream into an empty synced folder
//	drop-copied DIR    remove what untar wrote, of the names on stdin
//	with-parent PPID -- PROGRAM   run PROGRAM, ended when process PPID ends
//	version            print versions
package agent

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"

	"devtool.dev/agent/internal/atomicfile"
)

// Set at build time (build.sh) with -ldflags -X devtool.dev/agent.version=...
var (
	version          = "dev"
	syncthingVersion = "unknown"
)

const usage = `usage: devtool-agent <command> [flags]

commands:
  install DIR                  copy devtool-agent and syncthing next to this binary into DIR
  supervise [flags] [-- CMD..] run Syncthing and the SSH server (and CMD) as PID 1
  ssh [flags]                  run the SSH server
  syncthing-config --home DIR  write Syncthing's config.xml, cert and key from the contract
  keygen                       print a new SSH host key and Syncthing identity as JSON
  untar DIR                    extract a tar stream from stdin into the empty folder DIR
                               (exit 3: DIR is not empty, nothing done)
  drop-copied DIR              of the NUL-separated names on stdin (relative to DIR),
                               remove those still exactly as untar wrote them
  settled DIR                  the first sync of DIR has settled: forget untar's manifest
                               (a Syncthing start no longer keeps DIR receive-only)
  with-parent PPID -- PROGRAM [ARGS..]
                               exec PROGRAM, which gets SIGTERM when process
                               PPID ends (Linux; elsewhere a plain exec)
  version                      print the version

The contract (JSON) is read from the file named by $DEVTOOL_AGENT_CONFIG;
see README.md.
`

// Main runs the command os.Args names and exits.
func Main() {
	if len(os.Args) < 2 {
		fmt.Fprint(os.Stderr, usage)
		os.Exit(2)
	}
	cmd, args := os.Args[1], os.Args[2:]
	var err error
	switch cmd {
	case "install":
		err = runInstall(args)
	case "supervise":
		err = runSupervise(args)
	case "ssh":
		err = runSSH(args)
	case "syncthing-config":
		err = runSyncthingConfig(args)
	case "keygen":
		err = runKeygen(args)
	case "untar":
		err = runUntar(args)
	case "drop-copied":
		err = runDropCopied(args)
	case "settled":
		err = runSettled(args)
	case "with-parent":
		err = runWithParent(args)
	case "version", "--version", "-v":
		fmt.Printf("devtool-agent %s (syncthing %s, %s, %s/%s)\n",
			version, syncthingVersion, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	case "help", "-h", "--help":
		fmt.Print(usage)
	default:
		fmt.Fprintf(os.Stderr, "devtool-agent: unknown command %q\n\n%s", cmd, usage)
		os.Exit(2)
	}
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(2)
		}
		fmt.Fprintf(os.Stderr, "devtool-agent %s: %v\n", cmd, err)
		// A failure the CLI acts on has an exit code of its own (home.go, ExitStateUnwritable).
		var coded interface{ ExitCode() int }
		if errors.As(err, &coded) {
			os.Exit(coded.ExitCode())
		}
		os.Exit(1)
	}
}

// installedFiles are copied by `install`; they sit side by side in the
// image's /devtool-bin and in the dev container's /devtool/bin.
var installedFiles = []string{"devtool-agent", "syncthing"}

// SyncthingInside says this binary carries Syncthing too: the host bundle
// (agent/host) sets it. Copied into a dev container alone, as devtool-agent,
// it runs itself as Syncthing when no syncthing file is beside it, and
// install and the kept copy take the one file.
var SyncthingInside = false

// filesIn are the installedFiles present in dir: all of them, except that a
// binary with Syncthing inside needs no syncthing file.
func filesIn(dir string) []string {
	var names []string
	for _, name := range installedFiles {
		if name == "syncthing" && SyncthingInside {
			if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
				continue
			}
		}
		names = append(names, name)
	}
	return names
}

func runInstall(args []string) error {
	fs := flag.NewFlagSet("install", flag.ContinueOnError)
	from := fs.String("from", "", "source directory (default: this binary's directory)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return errors.New("usage: devtool-agent install [--from DIR] DIR")
	}
	dst := fs.Arg(0)
	src := *from
	if src == "" {
		self, err := os.Executable()
		if err != nil {
			return err
		}
		src = filepath.Dir(self)
	}
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	for _, name := range filesIn(src) {
		if err := copyExecutable(filepath.Join(src, name), filepath.Join(dst, name)); err != nil {
			return err
		}
		fmt.Printf("installed %s\n", filepath.Join(dst, name))
	}
	return nil
}

// keepBinaries copies the installed files from src into dst for the next dev
// pod (`supervise` with $DEVTOOL_KEEP_BINARIES), the agent last: a dev pod that finds the
// agent there finds Syncthing too, even if this one ended mid-copy.
func keepBinaries(src, dst string) error {
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	names := filesIn(src)
	for i := len(names) - 1; i >= 0; i-- {
		if err := copyExecutable(filepath.Join(src, names[i]), filepath.Join(dst, names[i])); err != nil {
			return err
		}
	}
	return nil
}

// copyExecutable copies src to dst via a temporary file and a rename, so
// the dev container never sees a half-written binary (an init container
// that is restarted mid-copy simply redoes it). Mode 0755: the dev
// container may run as a different UID than the init container.
func copyExecutable(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	if err := atomicfile.Write(dst, in, 0o755); err != nil {
		return fmt.Errorf("copy %s: %w", src, err)
	}
	return nil
}
