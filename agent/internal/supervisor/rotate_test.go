package supervisor

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRotatingFileBoundsSize(t *testing.T) {
	path := filepath.Join(t.TempDir(), "logs", "child.log")
	r, err := OpenRotating(path, 100, 2)
	if err != nil {
		t.Fatal(err)
	}
	line := strings.Repeat("x", 29) + "\n" // 30 bytes
	for i := 0; i < 20; i++ {
		if _, err := r.Write([]byte(line)); err != nil {
			t.Fatal(err)
		}
	}
	r.Close()
	for _, name := range []string{path, path + ".1", path + ".2"} {
		st, err := os.Stat(name)
		if err != nil {
			t.Fatal(err)
		}
		if st.Size() > 100 || st.Size()%30 != 0 {
			t.Fatalf("%s: %d bytes (lines must not be split, max 100)", name, st.Size())
		}
	}
	if _, err := os.Stat(path + ".3"); !os.IsNotExist(err) {
		t.Fatalf("more than 2 old files kept: %v", err)
	}
	// Reopening appends.
	r, _ = OpenRotating(path, 100, 2)
	r.Write([]byte("more\n"))
	r.Close()
	data, _ := os.ReadFile(path)
	if !strings.HasSuffix(string(data), "more\n") {
		t.Fatalf("not appended: %q", data)
	}
}
