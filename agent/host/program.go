package main

import (
	"path/filepath"
	"strings"
)

// program picks the program to run from argv: the one argv[0]'s file name
// names, else the one the first argument names. args is the argv that program
// sees: unchanged, or without the first argument. ok is false for neither.
func program(argv []string) (name string, args []string, ok bool) {
	if len(argv) == 0 {
		return "", nil, false
	}
	if base := exeName(argv[0]); known(base) {
		return base, argv, true
	}
	if len(argv) > 1 && known(argv[1]) {
		return argv[1], append([]string{argv[0]}, argv[2:]...), true
	}
	return "", nil, false
}

// exeName is the program name in path: its file name without .exe. Both
// separators count, whichever OS built the path.
func exeName(path string) string {
	base := filepath.Base(strings.ReplaceAll(path, `\`, "/"))
	if strings.EqualFold(filepath.Ext(base), ".exe") {
		base = base[:len(base)-len(".exe")]
	}
	return base
}

func known(name string) bool {
	_, ok := programs[name]
	return ok
}
