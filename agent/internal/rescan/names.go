package rescan

import (
	"bufio"
	"bytes"
	"path"
	"strings"
)

// Syncthing's own entries. It never synchronises them, and it writes
// them itself (temp files while pulling, versions, the marker), so
// scanning them would only echo Syncthing's own work back to it.
const (
	stignoreName      = ".stignore"
	defaultMarkerName = ".stfolder"
	versionsDirName   = ".stversions"
	unixTempPrefix    = ".syncthing."
	windowsTempPrefix = "~syncthing~"
	tempSuffix        = ".tmp"
)

// isSyncthingEntry reports whether rel (slash-separated, relative to the
// folder root) is, or is inside, one of Syncthing's own entries. Like
// Syncthing (lib/fs IsInternal, IsTemporary), the marker, .stignore and
// .stversions count at the root only, temp files at any depth. marker is
// the folder's markerName ("" means the default; "." means the root
// itself, which is no entry to skip).
func isSyncthingEntry(rel, marker string) bool {
	if isSyncthingTemp(rel) {
		return true
	}
	internal := []string{defaultMarkerName, versionsDirName, stignoreName}
	if marker != "" && marker != "." {
		internal = append(internal, strings.Trim(marker, "/"))
	}
	for _, in := range internal {
		if rel == in || strings.HasPrefix(rel, in+"/") {
			return true
		}
	}
	return false
}

// isSyncthingTemp reports whether rel names a file Syncthing is pulling.
func isSyncthingTemp(rel string) bool {
	name := path.Base(rel)
	return strings.HasPrefix(name, unixTempPrefix) ||
		(strings.HasPrefix(name, windowsTempPrefix) && strings.HasSuffix(name, tempSuffix))
}

// plainIgnores are the lines of a .stignore that name a path literally
// (no wildcards; Syncthing's (?d) and (?i) prefixes aside). Directories they match are not watched:
// Syncthing skips them, so an inotify watch there would cost kernel
// memory and events for nothing. Anything subtler (globs, includes) is
// left to Syncthing: watching too much only costs, skipping too much
// would lose fast sync of files Syncthing does synchronise.
type plainIgnores struct {
	rooted   map[string]bool // "/build": only the root's build
	anywhere map[string]bool // "node_modules": at any depth
}

// parsePlainIgnores reads .stignore content. Lines are trimmed like
// Syncthing does. Syncthing applies the first pattern that matches, so a
// negation ("!keep") can re-include something below a later plain line:
// reading stops at the first negation, and at the first #include (whose
// file may hold negations).
func parsePlainIgnores(data []byte) plainIgnores {
	p := plainIgnores{rooted: map[string]bool{}, anywhere: map[string]bool{}}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "" || strings.HasPrefix(line, "//"):
			continue // blank or comment
		case isNegation(line) || strings.HasPrefix(line, "#include"):
			return p
		}
		name, rooted, ok := plainName(stripPrefixes(line))
		if !ok {
			continue
		}
		if rooted {
			p.rooted[name] = true
		} else {
			p.anywhere[name] = true
		}
	}
	return p
}

// isNegation reports whether a pattern starts with "!", possibly after
// Syncthing's (?i) and (?d) prefixes, which may come in any order.
func isNegation(line string) bool {
	for {
		switch {
		case strings.HasPrefix(line, "!"):
			return true
		case strings.HasPrefix(line, "(?i)"), strings.HasPrefix(line, "(?d)"):
			line = line[4:]
		default:
			return false
		}
	}
}

// stripPrefixes removes Syncthing's (?i) and (?d) prefixes (any order,
// each once): "(?d)node_modules" still ignores node_modules, which then
// need not be watched. Under (?i) the name as written is ignored too, so
// skipping exactly it stays on the safe side.
func stripPrefixes(line string) string {
	for i := 0; i < 2; i++ {
		if strings.HasPrefix(line, "(?i)") || strings.HasPrefix(line, "(?d)") {
			line = line[4:]
		}
	}
	return line
}

// plainName returns the path a line names literally, and whether a
// leading "/" anchors it to the root. ok is false for anything that is
// not a plain path: wildcards, escapes, prefixes, "#" lines, a trailing
// "/" (which Syncthing's glob never matches against a name), "." or "..".
func plainName(line string) (name string, rooted, ok bool) {
	if strings.ContainsAny(line, `*?[]{}\`) || strings.HasPrefix(line, "#") || strings.HasPrefix(line, "(") {
		return "", false, false
	}
	rooted = strings.HasPrefix(line, "/")
	name = strings.TrimPrefix(line, "/")
	if name == "" || strings.HasSuffix(name, "/") {
		return "", false, false
	}
	for _, part := range strings.Split(name, "/") {
		if part == "" || part == "." || part == ".." {
			return "", false, false
		}
	}
	return name, rooted, true
}

// matches reports whether rel or one of its parent directories is named
// by a plain line. A rooted line names a path from the root; an unrooted
// one (Syncthing adds "**/" to it) any trailing run of path components.
func (p plainIgnores) matches(rel string) bool {
	if len(p.rooted) == 0 && len(p.anywhere) == 0 {
		return false
	}
	parts := strings.Split(rel, "/")
	for end := 1; end <= len(parts); end++ {
		if p.rooted[strings.Join(parts[:end], "/")] {
			return true
		}
		for start := 0; start < end; start++ {
			if p.anywhere[strings.Join(parts[start:end], "/")] {
				return true
			}
		}
	}
	return false
}
