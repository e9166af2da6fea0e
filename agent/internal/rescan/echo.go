package rescan

import (
	"crypto/sha256"
	"fmt"
	"path"
)

// maxEchoEntries bounds the memory of pullEchoes should Syncthing ever
// not follow its usual sequence.
const maxEchoEntries = 4096

// pullEchoes recognises the files Syncthing itself puts in place when it
// pulls a change from the laptop. It writes each one as a temp file,
// renames it over the final name, then sets its mtime. Asking Syncthing
// to scan such a file is an echo: it finds what it just wrote, and a big
// pull (a `git checkout` on the laptop) would trigger a whole-folder
// scan in the container. So the rename from a temp name and the one
// attribute change after it are not reported.
type pullEchoes struct {
	movedTemps map[string]bool // temp files just renamed away, relative paths
	landed     map[string]bool // files a pull just renamed into place
}

func newPullEchoes() *pullEchoes {
	return &pullEchoes{movedTemps: map[string]bool{}, landed: map[string]bool{}}
}

// tempMoved records that a Syncthing temp file was renamed away.
func (p *pullEchoes) tempMoved(rel string) {
	if len(p.movedTemps) >= maxEchoEntries {
		clear(p.movedTemps)
	}
	p.movedTemps[rel] = true
}

// landing reports whether a file created at rel is a pulled file: its
// temp file was just renamed away (the two halves of one rename).
func (p *pullEchoes) landing(rel string) bool {
	temp := path.Join(path.Dir(rel), syncthingTempName(path.Base(rel)))
	if !p.movedTemps[temp] {
		return false
	}
	delete(p.movedTemps, temp)
	if len(p.landed) >= maxEchoEntries {
		clear(p.landed)
	}
	p.landed[rel] = true
	return true
}

// pullChtimes reports whether an event on rel is the mtime Syncthing
// sets right after the rename. Any event on rel ends that expectation,
// so a later chmod or write by the user is reported.
func (p *pullEchoes) pullChtimes(rel string, attributeOnly bool) bool {
	if !p.landed[rel] {
		return false
	}
	delete(p.landed, rel)
	return attributeOnly
}

// syncthingTempName is the temp name Syncthing (lib/fs TempName) pulls a
// file named base into, on Unix.
func syncthingTempName(base string) string {
	const maxBase = 160 - len(unixTempPrefix) - len(tempSuffix)
	if len(base) > maxBase {
		return fmt.Sprintf("%s%x%s", unixTempPrefix, sha256.Sum256([]byte(base)), tempSuffix)
	}
	return unixTempPrefix + base + tempSuffix
}
