package rescan

import (
	"fmt"
	"net/url"
	"testing"
)

func TestScanQuery(t *testing.T) {
	for _, tc := range []struct {
		subs []string
		want string
	}{
		{nil, "folder=devtool-app"},
		{[]string{"src/main.go"}, "folder=devtool-app&sub=src%2Fmain.go"},
		{[]string{"z.txt", "a b/c&d.txt"}, "folder=devtool-app&sub=a+b%2Fc%26d.txt&sub=z.txt"},
	} {
		got := scanQuery("devtool-app", tc.subs)
		if got != tc.want {
			t.Errorf("scanQuery(%q) = %q, want %q", tc.subs, got, tc.want)
		}
		// What Syncthing's handler reads back.
		q, _ := url.ParseQuery(got)
		if q.Get("folder") != "devtool-app" || len(q["sub"]) != len(tc.subs) {
			t.Errorf("%q parses to %v", got, q)
		}
	}
}

func TestBatchCollapsesPathsUnderPendingDirectories(t *testing.T) {
	b := newBatch(DefaultMaxPaths)
	if !b.empty() {
		t.Fatal("new batch not empty")
	}
	b.add("src/pkg/a.go")
	b.add("src/pkg/b.go")
	b.add("srcx")
	b.add("src/pkg") // covers both files
	b.add("src/pkg/c.go")
	b.add("src/pkg/a.go")
	if got, want := b.take("f"), "folder=f&sub=src%2Fpkg&sub=srcx"; got != want {
		t.Fatalf("take = %q, want %q", got, want)
	}
	if !b.empty() {
		t.Fatal("batch not empty after take")
	}
}

func TestBatchBeyondMaxPathsScansWholeFolder(t *testing.T) {
	b := newBatch(3)
	for i := range 3 {
		b.add(fmt.Sprintf("f%d", i))
	}
	if got, want := b.take("f"), "folder=f&sub=f0&sub=f1&sub=f2"; got != want {
		t.Fatalf("3 paths: %q, want %q", got, want)
	}
	for i := range 4 {
		b.add(fmt.Sprintf("f%d", i))
	}
	b.add("more")
	if got, want := b.take("f"), "folder=f"; got != want {
		t.Fatalf("4 paths: %q, want %q", got, want)
	}
	// The next batch lists paths again.
	b.add("one")
	if got, want := b.take("f"), "folder=f&sub=one"; got != want {
		t.Fatalf("after a whole-folder scan: %q, want %q", got, want)
	}
	b.scanAll()
	b.add("two")
	if b.empty() || b.take("f") != "folder=f" {
		t.Fatal("scanAll did not make a whole-folder scan")
	}
}
