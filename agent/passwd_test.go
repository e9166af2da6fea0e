package agent

import (
	"os"
	"path/filepath"
	"testing"
)

const imagePasswd = "root:x:0:0:root:/root:/bin/bash\nnode:x:1000:1000::/home/node:/bin/bash\n"

func TestPasswdEntryOnlyForAUidWithout(t *testing.T) {
	if _, needed := passwdEntry(imagePasswd, 1000, 1000, "/home/node", "/bin/bash"); needed {
		t.Fatal("uid 1000 has an entry")
	}
	line, needed := passwdEntry(imagePasswd, 1000680000, 0, "/var/devtool/home", "/bin/sh")
	if !needed || line != "devtool:x:1000680000:0:devtool dev container user:/var/devtool/home:/bin/sh" {
		t.Fatalf("%q %v", line, needed)
	}
	taken := imagePasswd + "devtool:x:4242:4242::/:/bin/sh\n"
	if line, _ := passwdEntry(taken, 7, 0, "/h", "/bin/sh"); line != "devtool-7:x:7:0:devtool dev container user:/h:/bin/sh" {
		t.Fatalf("a taken name: %q", line)
	}
}

func TestEnsurePasswdEntryAppendsWhereWritable(t *testing.T) {
	path := filepath.Join(t.TempDir(), "passwd")
	if err := os.WriteFile(path, []byte(strings0(imagePasswd)), 0o664); err != nil {
		t.Fatal(err)
	}
	line, err := ensurePasswdEntry(path, 1000680000, 0, "/h", "/bin/sh")
	if err != nil || line == "" {
		t.Fatalf("%q %v", line, err)
	}
	data, _ := os.ReadFile(path)
	if string(data) != strings0(imagePasswd)+"\n"+line+"\n" {
		t.Fatalf("file now:\n%s", data)
	}
	if again, err := ensurePasswdEntry(path, 1000680000, 0, "/h", "/bin/sh"); err != nil || again != "" {
		t.Fatalf("added twice: %q %v", again, err)
	}
}

// strings0 is the image's file without its last newline: the entry still starts on a line of its own.
func strings0(s string) string { return s[:len(s)-1] }
