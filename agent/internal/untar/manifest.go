package untar

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// The manifest records what the bootstrap wrote, by identity: device,
// inode, size and modification time (ns) of every file, symlink and
// directory Extract created. It lets the settling of the first sync
// (DropCopied) tell the bootstrap's copy of a file, which holds the
// laptop's own older content, from anything written in the container
// since: a write through another inode or one that changed the file
// changes the identity. A conflict copy Syncthing makes of a copied file
// is a rename, so it keeps the identity under its new name.
//
// It lives in the agent's state dir, never in the synced folder.

// Kind of a recorded entry.
const (
	KindFile    = 'f'
	KindDir     = 'd'
	KindSymlink = 'l'
)

// Identity is one entry of the manifest.
type Identity struct {
	Kind    byte
	Dev     uint64
	Ino     uint64
	Size    int64
	MtimeNs int64
}

type inodeKey struct{ dev, ino uint64 }

// Manifest is a set of identities keyed by device and inode.
type Manifest struct {
	byInode map[inodeKey]Identity
}

// NewManifest returns an empty manifest.
func NewManifest() *Manifest { return &Manifest{byInode: map[inodeKey]Identity{}} }

// Len is the number of recorded entries.
func (m *Manifest) Len() int { return len(m.byInode) }

func (m *Manifest) add(id Identity) { m.byInode[inodeKey{id.Dev, id.Ino}] = id }

// Holds reports whether st is exactly an entry the manifest recorded: the
// same inode and kind, and for files and symlinks the same size and
// modification time. A directory's mtime changes whenever its entries do,
// so only its inode counts (DropCopied removes only empty ones).
func (m *Manifest) Holds(st *unix.Stat_t) bool {
	id, ok := m.byInode[inodeKey{uint64(st.Dev), st.Ino}]
	if !ok || id.Kind != kindOf(st.Mode) {
		return false
	}
	return id.Kind == KindDir || (id.Size == st.Size && id.MtimeNs == unix.TimespecToNsec(st.Mtim))
}

func kindOf(mode uint32) byte {
	switch mode & unix.S_IFMT {
	case unix.S_IFREG:
		return KindFile
	case unix.S_IFDIR:
		return KindDir
	case unix.S_IFLNK:
		return KindSymlink
	}
	return 0
}

// record adds name (in dirfd) as it is now on disk.
func (m *Manifest) record(dirfd int, name string) error {
	var st unix.Stat_t
	if err := retry(func() error { return unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW) }); err != nil {
		return fmt.Errorf("stat for the manifest: %w", err)
	}
	m.add(Identity{Kind: kindOf(st.Mode), Dev: uint64(st.Dev), Ino: st.Ino, Size: st.Size, MtimeNs: unix.TimespecToNsec(st.Mtim)})
	return nil
}

// ManifestPath is where the manifest of the bootstrap of dir is kept in
// the state dir: one per synced folder.
func ManifestPath(stateDir, dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		abs = dir
	}
	sum := sha256.Sum256([]byte(filepath.Clean(abs)))
	return filepath.Join(stateDir, "bootstrap", hex.EncodeToString(sum[:8])+".manifest")
}

// WriteTo writes the manifest as text, one entry a line:
// "KIND DEV INO SIZE MTIME_NS".
func (m *Manifest) WriteTo(w io.Writer) (int64, error) {
	bw := bufio.NewWriter(w)
	var n int64
	for _, id := range m.byInode {
		k, err := fmt.Fprintf(bw, "%c %d %d %d %d\n", id.Kind, id.Dev, id.Ino, id.Size, id.MtimeNs)
		n += int64(k)
		if err != nil {
			return n, err
		}
	}
	return n, bw.Flush()
}

// Save writes the manifest to path (its folder created), replacing any
// earlier one through a rename, so a reader never sees half of it.
func (m *Manifest) Save(path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	if _, err := m.WriteTo(f); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// LoadManifest reads a manifest Save wrote.
func LoadManifest(path string) (*Manifest, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	m := NewManifest()
	sc := bufio.NewScanner(f)
	line := 0
	for sc.Scan() {
		line++
		fields := strings.Fields(sc.Text())
		if len(fields) != 5 || len(fields[0]) != 1 {
			return nil, fmt.Errorf("%s:%d: not a manifest line", path, line)
		}
		dev, err1 := strconv.ParseUint(fields[1], 10, 64)
		ino, err2 := strconv.ParseUint(fields[2], 10, 64)
		size, err3 := strconv.ParseInt(fields[3], 10, 64)
		mtime, err4 := strconv.ParseInt(fields[4], 10, 64)
		if err := errors.Join(err1, err2, err3, err4); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, line, err)
		}
		m.add(Identity{Kind: fields[0][0], Dev: dev, Ino: ino, Size: size, MtimeNs: mtime})
	}
	return m, sc.Err()
}
