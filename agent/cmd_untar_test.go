package main

import (
	"archive/tar"
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestUntarCommand(t *testing.T) {
	var archive bytes.Buffer
	w := tar.NewWriter(&archive)
	w.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: "./", Mode: 0o755})
	w.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: "./a.txt", Mode: 0o644, Size: 2})
	w.Write([]byte("hi"))
	w.WriteHeader(&tar.Header{Typeflag: tar.TypeLink, Name: "./b.txt", Linkname: "a.txt"})
	w.Close()

	run := func(dir string) (stdout, stderr string, code int) {
		cmd := exec.Command(agentBin, "untar", dir)
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
