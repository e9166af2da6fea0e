package perms

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"devtool.dev/agent/internal/config"
	"devtool.dev/agent/internal/testutil"
)

const testAPIKey = "test-api-key"

// fakeSyncthing stands in for the three REST endpoints the applier uses:
// /rest/system/status (startTime), /rest/events (long poll, IDs from 1
// per start) and /rest/db/file (global entries the test sets).
type fakeSyncthing struct {
	t   *testing.T
	srv *httptest.Server

	mu        sync.Mutex
	changed   chan struct{} // closed and replaced when events arrive or Syncthing restarts
	startTime time.Time
	events    []event
	nextID    int
	globals   map[string]globalEntry // folder + "/" + name
	lookups   map[string]int         // /rest/db/file requests per folder + "/" + name
	requests  map[string]int         // per path
	down      bool                   // connections are closed unanswered
	failFiles int                    // the next n /rest/db/file requests get a 500
	badKeys   int
}

func newFakeSyncthing(t *testing.T) *fakeSyncthing {
	// Started a little later than the test made its files so far: as with
	// a real volume, they are older than Syncthing, and the walk at the
	// subscription looks none of them up.
	started := time.Now().Add(ctimeSlack + time.Second)
	f := &fakeSyncthing{t: t, changed: make(chan struct{}), startTime: started, nextID: 1,
		globals: map[string]globalEntry{}, lookups: map[string]int{}, requests: map[string]int{}}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeSyncthing) serve(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.requests[r.URL.Path]++
	if r.Header.Get("X-API-Key") != testAPIKey {
		f.badKeys++
	}
	down := f.down
	f.mu.Unlock()
	if down {
		conn, _, _ := w.(http.Hijacker).Hijack()
		conn.Close()
		return
	}
	q := r.URL.Query()
	switch r.URL.Path {
	case "/rest/system/status":
		f.mu.Lock()
		st := f.startTime.Format(time.RFC3339Nano)
		f.mu.Unlock()
		json.NewEncoder(w).Encode(map[string]any{"startTime": st, "myID": "X"})
	case "/rest/events":
		if q.Get("events") != "ItemFinished" {
			http.Error(w, "unexpected events "+q.Get("events"), http.StatusBadRequest)
			return
		}
		since, _ := strconv.Atoi(q.Get("since"))
		timeout, _ := strconv.Atoi(q.Get("timeout"))
		deadline := time.After(time.Duration(timeout) * time.Second)
		for {
			f.mu.Lock()
			var out []event
			for _, ev := range f.events {
				if ev.ID > since {
					out = append(out, ev)
				}
			}
			changed := f.changed
			f.mu.Unlock()
			if len(out) > 0 || timeout == 0 {
				json.NewEncoder(w).Encode(append([]event{}, out...))
				return
			}
			select {
			case <-changed:
			case <-deadline:
				w.Write([]byte("[]"))
				return
			case <-r.Context().Done():
				return
			}
		}
	case "/rest/db/file":
		key := q.Get("folder") + "/" + q.Get("file")
		f.mu.Lock()
		f.lookups[key]++
		g, ok := f.globals[key]
		fail := f.failFiles > 0
		if fail {
			f.failFiles--
		}
		f.mu.Unlock()
		switch {
		case fail:
			http.Error(w, "database trouble", http.StatusInternalServerError)
		case !ok:
			http.Error(w, "No such object in the index", http.StatusNotFound)
		default:
			json.NewEncoder(w).Encode(map[string]any{"global": g, "local": g})
		}
	default:
		http.NotFound(w, r)
	}
}

func (f *fakeSyncthing) wakeLocked() {
	close(f.changed)
	f.changed = make(chan struct{})
}

// set makes a global entry; perm "" means noPermissions.
func (f *fakeSyncthing) set(folder, name, typ, perm, by string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.globals[folder+"/"+name] = globalEntry{Type: typ, NoPermissions: perm == "", Permissions: perm, ModifiedBy: by}
}

// finished logs one ItemFinished event (errMsg "" for none).
func (f *fakeSyncthing) finished(folder, name, typ, action, errMsg string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	ev := event{ID: f.nextID, Time: time.Now()}
	f.nextID++
	ev.Data.Folder, ev.Data.Item, ev.Data.Type, ev.Data.Action = folder, name, typ, action
	if errMsg != "" {
		ev.Data.Error = &errMsg
	}
	f.events = append(f.events, ev)
	f.wakeLocked()
}

// skipEvents numbers the next event n higher, as if n were lost.
func (f *fakeSyncthing) skipEvents(n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.nextID += n
}

// restart is a new Syncthing: a new startTime, events numbered from 1
// again, nothing of the old ones kept. With cut, open connections (the
// pending long poll) are closed, as a real restart does.
func (f *fakeSyncthing) restart(cut bool) {
	f.mu.Lock()
	f.startTime, f.events, f.nextID = time.Now(), nil, 1
	f.wakeLocked()
	f.mu.Unlock()
	if cut {
		f.srv.CloseClientConnections()
	}
}

func (f *fakeSyncthing) setDown(down bool) {
	f.mu.Lock()
	f.down = down
	f.mu.Unlock()
	if down {
		f.srv.CloseClientConnections()
	}
}

func (f *fakeSyncthing) lookupsOf(folder, name string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.lookups[folder+"/"+name]
}

func (f *fakeSyncthing) requestsTo(path string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.requests[path]
}

// startApplier runs Run against the fake until the test ends and returns
// its log.
func startApplier(t *testing.T, f *fakeSyncthing, folders ...config.Folder) *testutil.SafeBuffer {
	t.Helper()
	logs := &testutil.SafeBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		Run(ctx, Options{Folders: folders, GUIAddress: f.srv.Listener.Addr().String(), APIKey: testAPIKey,
			SelfDeviceID: "SELFSELF-XXXXXXX", PollTimeout: time.Second, RetryInterval: 50 * time.Millisecond,
			Logf: func(format string, args ...any) { fmt.Fprintf(logs, format+"\n", args...) }})
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Error("Run did not return within 5s of its cancel")
		}
		f.mu.Lock()
		defer f.mu.Unlock()
		if f.badKeys > 0 {
			t.Errorf("%d requests without the API key", f.badKeys)
		}
		if t.Failed() {
			t.Logf("applier log:\n%s", logs.String())
		}
	})
	// Subscribed (its first request for events answers at once).
	testutil.Eventually(t, 5*time.Second, "subscribed", func() error {
		if f.requestsTo("/rest/events") == 0 {
			return fmt.Errorf("no request for events yet")
		}
		return nil
	})
	return logs
}

func permFolder(id, path string) config.Folder {
	return config.Folder{ID: id, Path: path, IgnorePerms: true}
}

// file writes path (and its parents) with exactly mode.
func file(t *testing.T, path string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
}

func modeOf(t *testing.T, path string) os.FileMode {
	t.Helper()
	info, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	return info.Mode() & (os.ModePerm | os.ModeSetuid | os.ModeSetgid | os.ModeSticky)
}

// waitMode waits until path has mode.
func waitMode(t *testing.T, path string, mode os.FileMode) {
	t.Helper()
	testutil.Eventually(t, 5*time.Second, "mode of "+path, func() error {
		if got := modeOf(t, path); got != mode {
			return fmt.Errorf("%v, want %v", got, mode)
		}
		return nil
	})
}

const (
	typeFile = "FILE_INFO_TYPE_FILE"
	typeDir  = "FILE_INFO_TYPE_DIRECTORY"
	laptop   = "LAPTOPX"
)
