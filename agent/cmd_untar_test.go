package agent

import (
	"archive/tar"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"devtool.dev/agent/internal/config"
)

func TestUntarCommand(t *testing.T) {
	var archive bytes.Buffer
	w := tar.NewWriter(&archive)
	w.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: "./", Mode: 0o755})
	w.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: "./a.txt", Mode: 0o644, Size: 2})
	w.Write([]byte("hi"))
	w.WriteHeader(&tar.Header{Typeflag: tar.TypeLink, Name: "./b.txt", Linkname: "a.txt"})
	w.Close()

	state := t.TempDir()
	run := func(dir string) (stdout, stderr string, code int) {
		cmd := exec.Command(agentBin, "untar", dir)
		cmd.Env = append(os.Environ(), "DEVTOOL_STATE="+state)
		cmd.Stdin = bytes.NewReader(archive.Bytes())
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		err := cmd.Run()
		var exit *exec.ExitError
		if err != nil && !errors.As(err, &exit) {
			t.Fatal(err)
		}
		return out.String(), errOut.String(), cmd.ProcessState.ExitCode()
	}

	dir := t.TempDir()
	os.Mkdir(filepath.Join(dir, ".stfolder"), 0o755)
	stdout, stderr, code := run(dir)
	if code != 0 || stdout != `{"files":1,"dirs":0,"symlinks":0,"bytes":2,"skipped":1}`+"\n" ||
		!strings.Contains(stderr, "skipped 1 ") {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	if data, _ := os.ReadFile(filepath.Join(dir, "a.txt")); string(data) != "hi" {
		t.Fatalf("a.txt: %q", data)
	}

	// Now the folder is not empty: exit 3, one line, nothing written.
	stdout, stderr, code = run(dir)
	if code != exitNotEmpty || stdout != "" || stderr != "devtool-agent untar: "+dir+" is not empty (a.txt)\n" {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}

	// Any other failure (here: no such folder): exit 1.
	_, stderr, code = run(filepath.Join(dir, "missing"))
	if code != 1 || !strings.HasPrefix(stderr, "devtool-agent untar: ") {
		t.Fatalf("missing dir: exit %d, stderr %q", code, stderr)
	}
}

// untar records what it wrote in the state dir; drop-copied removes, of
// the names it is given, only what is still exactly that.
func TestDropCopiedCommand(t *testing.T) {
	var archive bytes.Buffer
	w := tar.NewWriter(&archive)
	for _, name := range []string{"a.txt", "b.txt", "c.txt"} {
		w.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: 0o644, Size: 2})
		w.Write([]byte("hi"))
	}
	w.Close()
	state, dir := t.TempDir(), t.TempDir()
	env := append(os.Environ(), "DEVTOOL_STATE="+state)
	run := func(input []byte, args ...string) (string, string, int) {
		cmd := exec.Command(agentBin, args...)
		cmd.Env, cmd.Stdin = env, bytes.NewReader(input)
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		cmd.Run()
		return out.String(), errOut.String(), cmd.ProcessState.ExitCode()
	}
	// Before any untar there is no manifest: nothing is removed.
	if out, stderr, code := run([]byte("a.txt"), "drop-copied", dir); code != 0 || out != `{"removed":[],"manifest":false}`+"\n" {
		t.Fatalf("no manifest: exit %d, %q %q", code, out, stderr)
	}
	if _, stderr, code := run(archive.Bytes(), "untar", dir); code != 0 {
		t.Fatalf("untar: exit %d, %s", code, stderr)
	}
	if err := os.WriteFile(filepath.Join(dir, "b.txt"), []byte("app"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, stderr, code := run([]byte("a.txt\x00b.txt\x00"), "drop-copied", dir)
	if code != 0 || out != `{"removed":["a.txt"],"manifest":true}`+"\n" {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, stderr)
	}
	for name, want := range map[string]bool{"a.txt": false, "b.txt": true, "c.txt": true} {
		if _, err := os.Stat(filepath.Join(dir, name)); (err == nil) != want {
			t.Errorf("%s: exists %v, want %v", name, err == nil, want)
		}
	}
}

// After untar, a Syncthing start keeps the folder receive-only (its copy is
// not settled); `settled` forgets the manifest, and the contract's type
// applies again. Other folders and other types are left as they are.
func TestUnsettledFolderStaysReceiveOnlyUntilSettled(t *testing.T) {
	var archive bytes.Buffer
	w := tar.NewWriter(&archive)
	w.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: "a.txt", Mode: 0o644, Size: 2})
	w.Write([]byte("hi"))
	w.Close()
	state, copied, other, ro := t.TempDir(), t.TempDir(), t.TempDir(), t.TempDir()
	run := func(input []byte, args ...string) {
		t.Helper()
		cmd := exec.Command(agentBin, args...)
		cmd.Env, cmd.Stdin = append(os.Environ(), "DEVTOOL_STATE="+state), bytes.NewReader(input)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%v: %v: %s", args, err, out)
		}
	}
	contract := config.Syncthing{Folders: []config.Folder{
		{ID: "copied", Path: copied},
		{ID: "other", Path: other, Type: "sendreceive"},
		{ID: "ro", Path: ro, Type: "receiveonly"},
	}}
	types := func() []string {
		var logged []string
		st := unsettledReceiveOnly(contract, state, func(f string, a ...any) { logged = append(logged, fmt.Sprintf(f, a...)) })
		out := []string{}
		for _, f := range st.Folders {
			out = append(out, f.ID+"="+f.Type)
		}
		return append(out, logged...)
	}
	if got := strings.Join(types(), "; "); got != "copied=; other=sendreceive; ro=receiveonly" {
		t.Fatalf("before any copy: %s", got)
	}
	run(archive.Bytes(), "untar", copied)
	want := "copied=receiveonly; other=sendreceive; ro=receiveonly; syncthing: " + copied + " stays receive-only: its first copy is not settled yet"
	if got := strings.Join(types(), "; "); got != want {
		t.Fatalf("after the copy:\n got %s\nwant %s", got, want)
	}
	if contract.Folders[0].Type != "" {
		t.Fatal("the contract itself was changed")
	}
	run(nil, "settled", copied)
	if got := strings.Join(types(), "; "); got != "copied=; other=sendreceive; ro=receiveonly" {
		t.Fatalf("after settled: %s", got)
	}
	run(nil, "settled", copied) // again: nothing to forget, no error
}
