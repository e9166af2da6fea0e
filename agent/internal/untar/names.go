package untar

import (
	"errors"
	"strings"
)

// syncthingRoot are Syncthing's own names at the folder's root: the
// archive must not create or write through them.
var syncthingRoot = map[string]bool{".stfolder": true, ".stignore": true, ".stversions": true}

// mayExist is what the folder may already hold before the bootstrap:
// Syncthing creates .stfolder on its first start, and the CLI may have
// written .stignore.
var mayExist = map[string]bool{".stfolder": true, ".stignore": true}

// cleanName turns an entry's name into a relative slash path inside the
// folder, or "" for the archive's root entry ("./", as GNU tar writes it).
// GNU tar's "./" prefix and a directory's trailing "/" are dropped;
// anything else unusual is refused rather than normalised, so a name
// never means something other than what it says.
func cleanName(raw string) (string, error) {
	if raw == "" {
		return "", errors.New("empty name")
	}
	if strings.HasPrefix(raw, "/") {
		return "", errors.New("absolute name")
	}
	name := raw
	for strings.HasPrefix(name, "./") {
		name = name[2:]
	}
	name = strings.TrimRight(name, "/")
	if name == "" || name == "." {
		return "", nil
	}
	for c := range strings.SplitSeq(name, "/") {
		switch c {
		case "..":
			return "", errors.New("name contains ..")
		case "", ".":
			return "", errors.New("name contains an empty or . component")
		}
	}
	first, _, _ := strings.Cut(name, "/")
	if syncthingRoot[first] {
		return "", errors.New("name is inside Syncthing's own " + first)
	}
	return name, nil
}

// splitName splits a cleaned name into its parent ("" at the root) and
// its last component.
func splitName(name string) (parent, base string) {
	i := strings.LastIndexByte(name, '/')
	if i < 0 {
		return "", name
	}
	return name[:i], name[i+1:]
}
