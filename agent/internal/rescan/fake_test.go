package rescan

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"devtool.dev/agent/internal/config"
	"devtool.dev/agent/internal/testutil"
)

const testAPIKey = "test-api-key"

// scanRequest is one POST /rest/db/scan as Syncthing's handler reads it.
type scanRequest struct {
	method, apiKey, folder string
	subs                   []string
}

func (r scanRequest) String() string {
	return fmt.Sprintf("%s folder=%s subs=%q", r.method, r.folder, r.subs)
}

// fakeSyncthing stands in for Syncthing's REST API and records scan
// requests. The first failFirst requests get a 500.
type fakeSyncthing struct {
	t         *testing.T
	srv       *httptest.Server
	mu        sync.Mutex
	reqs      []scanRequest
	failFirst int
	cursor    int // requests before it were matched by an earlier expectation
}

func newFakeSyncthing(t *testing.T, failFirst int) *fakeSyncthing {
	f := &fakeSyncthing{t: t, failFirst: failFirst}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/rest/db/scan" {
			http.NotFound(w, r)
			return
		}
		q := r.URL.Query()
		f.mu.Lock()
		f.reqs = append(f.reqs, scanRequest{r.Method, r.Header.Get("X-API-Key"), q.Get("folder"), q["sub"]})
		fail := len(f.reqs) <= f.failFirst
		f.mu.Unlock()
		if fail {
			http.Error(w, "syncthing is starting", http.StatusInternalServerError)
		}
	}))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeSyncthing) requests() []scanRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.reqs)
}

// expect waits for a request from the cursor on that satisfies match,
// and moves the cursor to it (past it with skip: its other paths must
// not satisfy a later expectation).
func (f *fakeSyncthing) expect(what string, skip bool, match func(scanRequest) bool) {
	f.t.Helper()
	testutil.Eventually(f.t, 5*time.Second, what, func() error {
		reqs := f.requests()
		for i := f.cursor; i < len(reqs); i++ {
			if match(reqs[i]) {
				f.cursor = i
				if skip {
					f.cursor++
				}
				return nil
			}
		}
		return fmt.Errorf("requests so far: %v", reqs[f.cursor:])
	})
}

// expectSub waits for a scan of exactly this path of folder.
func (f *fakeSyncthing) expectSub(folder, path string) {
	f.t.Helper()
	f.expectSubThen(folder, path, false)
}

func (f *fakeSyncthing) expectSubThen(folder, path string, skip bool) {
	f.t.Helper()
	f.expect(fmt.Sprintf("scan of %s in %s", path, folder), skip, func(r scanRequest) bool {
		return r.folder == folder && slices.Contains(r.subs, path)
	})
}

// expectWholeFolder waits for a scan request without sub paths.
func (f *fakeSyncthing) expectWholeFolder(folder string) {
	f.t.Helper()
	f.expect("whole-folder scan of "+folder, false, func(r scanRequest) bool {
		return r.folder == folder && len(r.subs) == 0
	})
}

// settle writes a fresh file at the folder root and waits for its scan.
// Events are handled in order, so every earlier change has been sent
// by then: what follows the cursor is new.
func (f *fakeSyncthing) settle(folder, dir string) {
	f.t.Helper()
	name := fmt.Sprintf("settle-%d.txt", time.Now().UnixNano())
	mustWrite(f.t, filepath.Join(dir, name), "sentinel")
	f.expectSubThen(folder, name, true)
}

// neverScanned fails if any request so far names path or a path inside it.
func (f *fakeSyncthing) neverScanned(paths ...string) {
	f.t.Helper()
	for _, r := range f.requests() {
		for _, s := range r.subs {
			for _, p := range paths {
				if s == p || strings.HasPrefix(s, p+"/") {
					f.t.Errorf("%s was scanned: %v", s, r)
				}
			}
		}
	}
}

func (f *fakeSyncthing) checkCredentials() {
	f.t.Helper()
	for _, r := range f.requests() {
		if r.method != http.MethodPost || r.apiKey != testAPIKey {
			f.t.Errorf("request %v with API key %q", r, r.apiKey)
		}
	}
}

// startRescanner runs Run against fake until the test ends, and checks
// that it stops promptly when cancelled.
func startRescanner(t *testing.T, fake *fakeSyncthing, folders ...config.Folder) *testutil.SafeBuffer {
	t.Helper()
	logs := &testutil.SafeBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		Run(ctx, Options{
			Folders:    folders,
			GUIAddress: strings.TrimPrefix(fake.srv.URL, "http://"),
			APIKey:     testAPIKey,
			RootPoll:   20 * time.Millisecond,
			Logf: func(format string, args ...any) {
				fmt.Fprintf(logs, format+"\n", args...)
			},
		})
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-stopped:
		case <-time.After(5 * time.Second):
			t.Error("Run did not return after its context was cancelled")
		}
		if t.Failed() {
			t.Logf("rescanner log:\n%s", logs.String())
		}
	})
	for _, f := range folders {
		testutil.WaitLog(t, logs, "folder "+f.ID+": watching")
	}
	return logs
}

func mustWrite(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
