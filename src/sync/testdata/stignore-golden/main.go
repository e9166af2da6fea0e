// Command stignore-golden writes ../stignore-cases.json: for each ignore file below and each
// path, whether Syncthing's own matcher (lib/ignore, the version devtool ships) ignores it. The
// TypeScript leave-out matcher (src/sync/ignore-match.ts) is tested against it.
//
//	cd src/sync/testdata/stignore-golden && go run . > ../stignore-cases.json
package main

import (
	"encoding/json"
	"os"
	"path/filepath"

	"github.com/syncthing/syncthing/lib/fs"
	"github.com/syncthing/syncthing/lib/ignore"
)

var ignoreFiles = [][]string{
	{"node_modules", "/build", ".git"},
	{"*.log", "/dist/", "**/cache"},
	{"!keep.log", "*.log"},
	{"(?i)Secret*", "// a comment", "", "*.pem"},
	{"a/**/z", "src/*.tmp", "?x"},
	{"[a-c]*.txt", "[!a-c]*.md", "{foo,bar}.json", "file\\*name"},
	{"(?d)*.o", "!(?i)KEEP", "deep/er/path"},
	{"/docs/*.md", "logs/", "*~"},
	{"**"},
	{"!important", "*"},
	{".env*", "!.env.example"},
}

var paths = []string{
	"node_modules", "node_modules/x/index.js", "src/node_modules/y.js", "build", "build/out.js", "src/build/x",
	".git", ".git/HEAD", "app.log", "logs/app.log", "logs", "logs/x.txt", "dist", "dist/a.js", "src/dist/a.js",
	"cache", "a/b/cache", "a/b/cache/x", "keep.log", "sub/keep.log", "secret.txt", "SECRET.txt", "sub/Secrets/key",
	"key.pem", "dir/key.pem", "a/z", "a/b/c/z", "a/b/c/z/w", "src/x.tmp", "src/sub/x.tmp", "ax", "sub/bx", "abx",
	"a.txt", "d.txt", "sub/b.txt", "a.md", "z.md", "foo.json", "bar.json", "baz.json", "file*name", "fileXname",
	"x.o", "lib/y.o", "KEEP", "keep", "deep/er/path", "x/deep/er/path/y", "docs/a.md", "docs/sub/a.md", "sub/docs/a.md",
	"notes.txt~", "important", "sub/important", "other", ".env", ".env.local", ".env.example", "src/.env",
	"README.md", "src/index.ts", "src/a/b/c.ts",
}

type testCase struct {
	Lines   []string        `json:"lines"`
	Ignored map[string]bool `json:"ignored"`
}

func main() {
	var out []testCase
	for _, lines := range ignoreFiles {
		dir, err := os.MkdirTemp("", "stignore")
		if err != nil {
			panic(err)
		}
		body := ""
		for _, l := range lines {
			body += l + "\n"
		}
		if err := os.WriteFile(filepath.Join(dir, ".stignore"), []byte(body), 0o644); err != nil {
			panic(err)
		}
		m := ignore.New(fs.NewFilesystem(fs.FilesystemTypeBasic, dir))
		if err := m.Load(".stignore"); err != nil {
			panic(err)
		}
		c := testCase{Lines: lines, Ignored: map[string]bool{}}
		for _, p := range paths {
			c.Ignored[p] = m.Match(p).IsIgnored()
		}
		out = append(out, c)
		os.RemoveAll(dir)
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		panic(err)
	}
}
