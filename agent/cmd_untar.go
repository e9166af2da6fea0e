package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

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
	fs := flag.NewFlagSet("untar", flag.ContinueOnError)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return errors.New("usage: devtool-agent untar DIR < archive.tar")
	}
	in := bufio.NewReaderSize(os.Stdin, 1<<20)
	st, err := untar.Extract(fs.Arg(0), in)
	if errors.Is(err, untar.ErrNotEmpty) {
		fmt.Fprintf(os.Stderr, "devtool-agent untar: %v\n", err)
		os.Exit(exitNotEmpty)
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
