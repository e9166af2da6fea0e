//go:build linux

package agent

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"devtool.dev/agent/internal/config"
	"devtool.dev/agent/internal/untar"
)

// exitNotEmpty is untar's exit code for a folder that is not empty: not a
// failure, the caller then just skips the bootstrap and lets Syncthing sync.
const exitNotEmpty = 3

// runUntar extracts a tar stream from stdin into an empty synced folder:
// the CLI's one-time bootstrap of a new dev container. On a failure the
// files already written stay; the CLI reports it and Syncthing then syncs
// the folder as usual.
func runUntar(args []string) error {
	dir, err := oneDir("untar", "DIR < archive.tar", args)
	if err != nil {
		return err
	}
	in := bufio.NewReaderSize(os.Stdin, 1<<20)
	manifest := untar.NewManifest()
	st, err := untar.ExtractRecording(dir, in, manifest)
	if errors.Is(err, untar.ErrNotEmpty) {
		fmt.Fprintf(os.Stderr, "devtool-agent untar: %v\n", err)
		os.Exit(exitNotEmpty)
	}
	// What landed is recorded even after a failure: the settling of the
	// first sync tells the copy from the app's writes by it (drop-copied).
	// Without it the sync still settles, with conflict copies for files
	// changed on the laptop meanwhile, so a failure to save is only said.
	if manifest.Len() > 0 {
		if serr := manifest.Save(untar.ManifestPath(stateDir(), dir)); serr != nil {
			fmt.Fprintf(os.Stderr, "devtool-agent untar: cannot save the manifest: %v\n", serr)
		}
	}
	if err != nil {
		return err
	}
	// Let the sender finish writing (padding after the end-of-archive
	// blocks) instead of failing on a closed pipe.
	io.Copy(io.Discard, in)
	if st.Skipped > 0 {
		fmt.Fprintf(os.Stderr, "devtool-agent untar: skipped %d entries that are not files, directories or symlinks (hard links, devices, fifos)\n", st.Skipped)
	}
	out, err := json.Marshal(st)
	if err != nil {
		return err
	}
	fmt.Println(string(out))
	return nil
}

// runSettled forgets the manifest of DIR's bootstrap: the CLI calls it
// once the first sync has settled (no stale copy is left to remove) and
// the folder is send-receive. From then on a Syncthing start
// writes the folder as the contract says (unsettledReceiveOnly).
func runSettled(args []string) error {
	dir, err := oneDir("settled", "DIR", args)
	if err != nil {
		return err
	}
	err = os.Remove(untar.ManifestPath(stateDir(), dir))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	return err
}

// unsettledReceiveOnly is the contract's Syncthing section with every
// send-receive folder whose bootstrap copy has not settled yet (its
// manifest is still in the state dir: runSettled has not run) made
// receive-only. Syncthing's configuration is written from the contract
// before every start, and a folder written send-receive would announce
// the copy's stale files (the laptop's older content) as the container's
// own changes: conflict copies on both sides. The CLI settles such a
// folder and turns it send-receive, at once or at the next `up`.
func unsettledReceiveOnly(st config.Syncthing, stateDir string, logf func(string, ...any)) config.Syncthing {
	folders := slices.Clone(st.Folders)
	for i, f := range folders {
		if f.Type != "" && f.Type != "sendreceive" {
			continue
		}
		if _, err := os.Stat(untar.ManifestPath(stateDir, f.Path)); err == nil {
			folders[i].Type = "receiveonly"
			logf("syncthing: %s stays receive-only: its first copy is not settled yet", f.Path)
		}
	}
	st.Folders = folders
	return st
}

// oneDir parses the arguments of a subcommand that takes exactly one
// folder and no flags (untar, drop-copied, settled).
func oneDir(name, usage string, args []string) (string, error) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	if err := fs.Parse(args); err != nil {
		return "", err
	}
	if fs.NArg() != 1 {
		return "", errors.New("usage: devtool-agent " + name + " " + usage)
	}
	return fs.Arg(0), nil
}

// stateDir is the agent's state dir as the supervisor resolves it
// ($DEVTOOL_STATE, which the dev container's environment sets, else the default).
func stateDir() string {
	return (*config.Config)(nil).StateDirectory()
}

// runDropCopied removes, of the names read from stdin (NUL-separated,
// relative to DIR), those still exactly as untar wrote them (its
// manifest): the settling of a bootstrapped first sync passes the
// folder's receive-only changes (docs/sync.md). Prints one JSON line
// {"removed":[...],"manifest":true|false}.
func runDropCopied(args []string) error {
	dir, err := oneDir("drop-copied", "DIR < NUL-separated names", args)
	if err != nil {
		return err
	}
	input, err := io.ReadAll(os.Stdin)
	if err != nil {
		return err
	}
	var names []string
	for n := range strings.SplitSeq(string(input), "\x00") {
		if n != "" {
			names = append(names, n)
		}
	}
	out := struct {
		Removed  []string `json:"removed"`
		Manifest bool     `json:"manifest"`
	}{Removed: []string{}}
	manifest, err := untar.LoadManifest(untar.ManifestPath(stateDir(), dir))
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return err
	default:
		out.Manifest = true
		removed, err := untar.DropCopied(dir, names, manifest)
		out.Removed = append(out.Removed, removed...)
		if err != nil {
			// What was removed is said first: the caller rescans it.
			line, _ := json.Marshal(out)
			fmt.Println(string(line))
			return err
		}
	}
	line, err := json.Marshal(out)
	if err != nil {
		return err
	}
	fmt.Println(string(line))
	return nil
}
