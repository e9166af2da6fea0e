//go:build linux

package agent

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// passwdFile is where the C library, and so whoami, bash's prompt, ssh,
// git and Python's getpass, look a uid up.
const passwdFile = "/etc/passwd"

// ensurePasswdEntry gives the container's uid a name where the image
// lets it. A uid without an /etc/passwd entry (the random uid OpenShift
// assigns, or a runAsUser the image never created) has no name: bash says
// "I have no name!", whoami fails, and tools that look the user up refuse
// to run. Images made for such uids make /etc/passwd writable by group 0
// (OpenShift's convention) so that the entrypoint can add the entry; the
// dev container's entrypoint is this agent, so it does. The file is in
// the container's own layer: the pod's next container starts from the
// image's again. Returns the line added, or "" when none was needed or
// the file cannot be written.
func ensurePasswdEntry(path string, uid, gid int, home, shell string) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	line, needed := passwdEntry(string(data), uid, gid, home, shell)
	if !needed || unix.Access(path, unix.W_OK) != nil {
		return "", nil
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return "", err
	}
	prefix := ""
	if len(data) > 0 && !strings.HasSuffix(string(data), "\n") {
		prefix = "\n"
	}
	if _, err := f.WriteString(prefix + line + "\n"); err != nil {
		f.Close()
		return "", err
	}
	return line, f.Close()
}

// passwdEntry is the line to add for uid, and whether one is needed: not
// when the file has an entry for uid already. The name is "devtool", or
// "devtool-UID" when "devtool" is taken.
func passwdEntry(content string, uid, gid int, home, shell string) (string, bool) {
	names := map[string]bool{}
	for _, l := range strings.Split(content, "\n") {
		fields := strings.Split(l, ":")
		if len(fields) < 3 {
			continue
		}
		if fields[2] == strconv.Itoa(uid) {
			return "", false
		}
		names[fields[0]] = true
	}
	name := "devtool"
	if names[name] {
		name = fmt.Sprintf("devtool-%d", uid)
	}
	return fmt.Sprintf("%s:x:%d:%d:devtool dev container user:%s:%s", name, uid, gid, home, shell), true
}
