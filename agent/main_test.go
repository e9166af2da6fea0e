package agent

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"devtool.dev/agent/internal/config"
	"devtool.dev/agent/internal/syncthingcfg"
	"devtool.dev/agent/internal/testutil"
)

// These tests drive the real devtool-agent binary the way the pod does:
// the init container's `install`, then `supervise` as the dev container's
// command, reached over SSH.

var agentBin string

// envTestBundle names a host bundle (agent/build.sh host-path) to run these
// tests against instead of the agent alone: the image lays it out as
// devtool-agent with no syncthing beside it (scripts/test.sh does both).
const envTestBundle = "DEVTOOL_AGENT_TEST_BUNDLE"

// laidOut is what the image's /devtool-bin holds, and install copies.
func laidOut() []string {
	if os.Getenv(envTestBundle) != "" {
		return []string{"devtool-agent"}
	}
	return installedFiles
}

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "devtool-agent-test")
	if err != nil {
		panic(err)
	}
	agentBin = filepath.Join(dir, "devtool-agent")
	if bundle := os.Getenv(envTestBundle); bundle != "" {
		// Under the agent's name, as the image and the copy place it.
		data, err := os.ReadFile(bundle)
		if err == nil {
			err = os.WriteFile(agentBin, data, 0o755)
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", envTestBundle, err)
			os.Exit(1)
		}
	} else if out, err := exec.Command("go", "build", "-o", agentBin, "./cmd/devtool-agent").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building devtool-agent: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// installAgent lays out an image-like /devtool-bin and runs `install`
// from it, as the init container does; it returns the target directory.
func installAgent(t *testing.T) string {
	t.Helper()
	src := filepath.Join(t.TempDir(), "devtool-bin")
	os.MkdirAll(src, 0o755)
	files := map[string]string{"devtool-agent": agentBin}
	if len(laidOut()) > 1 {
		files["syncthing"] = testutil.SyncthingBinary(t)
	}
	for name, from := range files {
		data, err := os.ReadFile(from)
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(src, name), data, 0o755)
	}
	dst := filepath.Join(t.TempDir(), "devtool", "bin")
	out, err := exec.Command(filepath.Join(src, "devtool-agent"), "install", dst).CombinedOutput()
	if err != nil {
		t.Fatalf("install: %v\n%s", err, out)
	}
	return dst
}

func TestInstall(t *testing.T) {
	dst := installAgent(t)
	if names, _ := os.ReadDir(dst); len(names) != len(laidOut()) {
		t.Fatalf("installed %v, want %v", names, laidOut())
	}
	for _, name := range laidOut() {
		st, err := os.Stat(filepath.Join(dst, name))
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != 0o755 {
			t.Fatalf("%s: mode %v", name, st.Mode())
		}
	}
	out, err := exec.Command(filepath.Join(dst, "devtool-agent"), "version").Output()
	if err != nil || !strings.HasPrefix(string(out), "devtool-agent ") {
		t.Fatalf("installed agent: %q, %v", out, err)
	}
	// Re-running (a restarted init container) replaces the files.
	if out, err := exec.Command(filepath.Join(dst, "devtool-agent"), "install", dst).CombinedOutput(); err != nil {
		t.Fatalf("second install: %v\n%s", err, out)
	}
	if m, _ := filepath.Glob(filepath.Join(dst, ".*tmp*")); len(m) > 0 {
		t.Fatalf("temporary files left: %v", m)
	}
}

func TestSuperviseNeedsConfig(t *testing.T) {
	cmd := exec.Command(agentBin, "supervise")
	cmd.Env = append(os.Environ(), config.EnvConfig+"=")
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), config.EnvConfig) {
		t.Fatalf("want a clear error about %s, got %v: %s", config.EnvConfig, err, out)
	}
}

type env struct {
	contract *config.Config
	keys     Keys
	client   ssh.Signer
	hostKey  ssh.PublicKey
	path     string // contract file
}

// newContract writes a contract like the CLI's for one dev environment.
func newContract(t *testing.T, folder string) *env {
	t.Helper()
	keys, err := NewKeys()
	if err != nil {
		t.Fatal(err)
	}
	local, err := syncthingcfg.NewIdentity()
	if err != nil {
		t.Fatal(err)
	}
	_, priv, _ := ed25519.GenerateKey(rand.Reader)
	client, _ := ssh.NewSignerFromKey(priv)
	hostKey, _, _, _, err := ssh.ParseAuthorizedKey([]byte(keys.SSHHostPublicKey))
	if err != nil {
		t.Fatal(err)
	}
	c := &config.Config{Version: config.Version}
	c.SSH.ListenAddress = fmt.Sprintf("127.0.0.1:%d", testutil.FreePort(t))
	c.SSH.HostKey = keys.SSHHostKey
	c.SSH.AuthorizedKeys = []string{string(ssh.MarshalAuthorizedKey(client.PublicKey()))}
	st := &c.Syncthing
	st.Certificate, st.Key, st.DeviceID = keys.Syncthing.Certificate, keys.Syncthing.Key, keys.Syncthing.DeviceID
	st.APIKey, st.GUIPassword = keys.APIKey, keys.GUIPassword
	st.GUIAddress = fmt.Sprintf("127.0.0.1:%d", testutil.FreePort(t))
	st.ListenAddress = fmt.Sprintf("tcp://127.0.0.1:%d", testutil.FreePort(t))
	st.Peer.DeviceID = local.DeviceID
	st.Folders = []config.Folder{{ID: "app", Path: folder, IgnorePerms: true}} // as the CLI's remote end
	data, _ := json.MarshalIndent(c, "", "  ")
	path := filepath.Join(t.TempDir(), "agent.json")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return &env{contract: c, keys: keys, client: client, hostKey: hostKey, path: path}
}

func (e *env) dial() (*ssh.Client, error) {
	return ssh.Dial("tcp", e.contract.SSH.ListenAddress, &ssh.ClientConfig{
		User: "dev", Auth: []ssh.AuthMethod{ssh.PublicKeys(e.client)},
		HostKeyCallback: ssh.FixedHostKey(e.hostKey), Timeout: 5 * time.Second,
	})
}

// ping calls Syncthing's REST API through the SSH tunnel, as the CLI does.
func (e *env) ping(c *ssh.Client) error {
	hc := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return c.Dial("tcp", e.contract.Syncthing.GUIAddress)
		},
	}}
	req, _ := http.NewRequest(http.MethodGet, "http://"+e.contract.Syncthing.GUIAddress+"/rest/system/ping", nil)
	req.Header.Set("X-API-Key", e.contract.Syncthing.APIKey)
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if !bytes.Contains(body, []byte(`"pong"`)) {
		return fmt.Errorf("%s: %s", resp.Status, body)
	}
	return nil
}

func startedPIDs(log, name string) []int {
	var pids []int
	for _, m := range regexp.MustCompile(name+`: started pid (\d+)`).FindAllStringSubmatch(log, -1) {
		n, _ := strconv.Atoi(m[1])
		pids = append(pids, n)
	}
	return pids
}

func TestSuperviseEndToEnd(t *testing.T) { superviseEndToEnd(t, nil) }

// The dev container may run as any UID without a passwd entry (OpenShift,
// PSA "restricted"): the pod spec's fsGroup makes the volumes group-
// writable, and nothing else is needed. Simulated here with a foreign UID
// whose only link to the state dir is the supplementary fsGroup.
func TestSuperviseEndToEndAsArbitraryUID(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to switch to another UID")
	}
	superviseEndToEnd(t, &syscall.Credential{Uid: 100042, Gid: 100042, Groups: []uint32{fsGroup}})
}

const fsGroup = 4242

// podDir makes a directory as a volume with fsGroup would look: group
// fsGroup, setgid, group-writable; and reachable by any UID (t.TempDir's
// parents are 0700).
func podDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "devtool-agent-pod")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if os.Geteuid() == 0 {
		os.Chown(dir, 0, fsGroup)
	}
	os.Chmod(dir, 0o775|os.ModeSetgid)
	return dir
}

func superviseEndToEnd(t *testing.T, cred *syscall.Credential) {
	bin := installAgent(t)
	work := podDir(t) // the container's working directory (and synced folder's parent)
	state := podDir(t)
	e := newContract(t, filepath.Join(work, "src"))
	if cred != nil {
		// A Secret volume with fsGroup: root-owned, group-readable.
		os.Chown(e.path, 0, fsGroup)
		os.Chmod(e.path, 0o640)
		for d := filepath.Dir(e.path); d != os.TempDir() && d != "/"; d = filepath.Dir(d) {
			os.Chmod(d, 0o755)
		}
		for d := bin; d != os.TempDir() && d != "/"; d = filepath.Dir(d) {
			os.Chmod(d, 0o755)
		}
	}

	// The user command orphans a child (its inner shell exits at once),
	// and records that it got SIGTERM.
	script := `sh -c 'sleep 1 & echo $! > orphan.pid'; trap 'echo TERM > trapped; exit 0' TERM; while :; do sleep 0.1; done`
	cmd := exec.Command(filepath.Join(bin, "devtool-agent"), "supervise", "--backoff-min=200ms", "--", "sh", "-c", script)
	cmd.Dir = work
	cmd.Env = append(os.Environ(), config.EnvConfig+"="+e.path, config.EnvState+"="+state, "APP_ENV=from-pod-spec")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	var out testutil.SafeBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var waitErr error
	exited := make(chan struct{})
	go func() { waitErr = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		// On a failure midway, stop the tree politely, then leave nothing.
		syscall.Kill(cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(12 * time.Second):
			syscall.Kill(cmd.Process.Pid, syscall.SIGKILL)
		}
		for _, pid := range processesWith(state) {
			syscall.Kill(pid, syscall.SIGKILL)
		}
		if t.Failed() || os.Getenv("DEBUG_E2E") != "" {
			t.Logf("supervisor output:\n%s", out.String())
		}
	})

	var c *ssh.Client
	testutil.Eventually(t, 10*time.Second, "ssh login", func() (err error) {
		c, err = e.dial()
		return err
	})
	defer c.Close()
	s, _ := c.NewSession()
	got, err := s.Output(`pwd; echo "$APP_ENV ${DEVTOOL_AGENT_CONFIG:-hidden} $(id -u)"`)
	uid := os.Getuid()
	if cred != nil {
		uid = int(cred.Uid)
	}
	if want := fmt.Sprintf("%s\nfrom-pod-spec hidden %d\n", work, uid); err != nil || string(got) != want {
		t.Fatalf("exec: %q (want %q), %v", got, want, err)
	}
	testutil.Eventually(t, 20*time.Second, "syncthing API through the tunnel", func() error { return e.ping(c) })
	// The rescanner watches the synced folder once Syncthing has created it.
	testutil.Eventually(t, 10*time.Second, "rescanner watching", func() error {
		if !strings.Contains(out.String(), "rescan: folder app: watching") {
			return errors.New("no watch started")
		}
		if !strings.Contains(out.String(), "perms: applying the laptop's permission bits in folder app") {
			return errors.New("no permission applier started")
		}
		return nil
	})

	// The orphan is adopted by the supervisor, then reaped.
	var orphan int
	testutil.Eventually(t, 5*time.Second, "orphan pid", func() error {
		data, err := os.ReadFile(filepath.Join(work, "orphan.pid"))
		if err == nil {
			orphan, err = strconv.Atoi(strings.TrimSpace(string(data)))
		}
		return err
	})
	if f := statFields(orphan); len(f) > 1 && f[1] != strconv.Itoa(cmd.Process.Pid) {
		t.Fatalf("orphan %d has parent %s, want the supervisor %d", orphan, f[1], cmd.Process.Pid)
	}
	testutil.Eventually(t, 5*time.Second, "orphan reaped", func() error {
		if f := statFields(orphan); f != nil {
			return fmt.Errorf("state %s", f[0])
		}
		return nil
	})

	// A crashed Syncthing is restarted and serves again.
	first := startedPIDs(out.String(), "syncthing")
	if len(first) != 1 {
		t.Fatalf("syncthing starts: %v", first)
	}
	syscall.Kill(first[0], syscall.SIGKILL)
	home := filepath.Join(state, "syncthing")
	testutil.Eventually(t, 10*time.Second, "syncthing restarted", func() error {
		if n := len(startedPIDs(out.String(), "syncthing")); n != 2 {
			return fmt.Errorf("%d starts", n)
		}
		return e.ping(c)
	})
	// ...and nothing of the killed one survives to answer in its place.
	if n := startedPIDs(out.String(), "syncthing"); len(n) != 2 || len(processesWith(home)) != 1 || processesWith(home)[0] != n[1] {
		t.Fatalf("syncthing processes %v, started %v", processesWith(home), n)
	}

	// SIGTERM (pod deletion) stops everything cleanly and promptly.
	pids := append(startedPIDs(out.String(), "syncthing"), startedPIDs(out.String(), "ssh")...)
	start := time.Now()
	cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-exited:
		if waitErr != nil {
			t.Fatalf("supervisor exit: %v", waitErr)
		}
	case <-time.After(12 * time.Second):
		t.Fatal("supervisor did not exit after SIGTERM")
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Fatalf("shutdown took %v", took)
	}
	if data, _ := os.ReadFile(filepath.Join(work, "trapped")); string(data) != "TERM\n" {
		t.Fatal("user command did not get SIGTERM")
	}
	for _, pid := range pids {
		if f := statFields(pid); f != nil {
			t.Fatalf("child %d still there (state %s)", pid, f[0])
		}
	}
	if left := processesWith(home); len(left) > 0 {
		t.Fatalf("syncthing processes left: %v", left)
	}
	for _, name := range []string{"syncthing.log", "ssh.log", "supervisor.log"} {
		data, err := os.ReadFile(filepath.Join(state, "logs", name))
		if err != nil || len(data) == 0 {
			t.Fatalf("log %s: %v", name, err)
		}
	}
	if data, _ := os.ReadFile(filepath.Join(state, "logs", "ssh.log")); !bytes.Contains(data, []byte("login from")) {
		t.Fatalf("ssh.log: %s", data)
	}
}

// TestSuperviseKeepsBinaries: with $DEVTOOL_KEEP_BINARIES, supervise copies the
// installed agent and Syncthing into the folder the next dev pod runs them
// from (the claim), without holding up what it supervises.
func TestSuperviseKeepsBinaries(t *testing.T) {
	bin := installAgent(t)
	state := t.TempDir()
	keep := filepath.Join(state, "agent-0123456789ab")
	cmd := exec.Command(filepath.Join(bin, "devtool-agent"), "supervise", "--no-ssh", "--no-syncthing", "--state", state, "--", "sleep", "30")
	cmd.Env = append(os.Environ(), EnvKeepBinaries+"="+keep)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	deadline := time.Now().Add(20 * time.Second)
	for _, name := range laidOut() {
		for {
			want, _ := os.ReadFile(filepath.Join(bin, name))
			got, err := os.ReadFile(filepath.Join(keep, name))
			if err == nil && bytes.Equal(got, want) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s not kept in %s: %v", name, keep, err)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	out, err := exec.Command(filepath.Join(keep, "devtool-agent"), "version").Output()
	if err != nil || !strings.HasPrefix(string(out), "devtool-agent ") {
		t.Fatalf("kept agent: %q, %v", out, err)
	}
}
