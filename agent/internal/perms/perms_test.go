package perms

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"devtool.dev/agent/internal/config"
	"devtool.dev/agent/internal/testutil"
)

// Items the puller finished get the bits of the laptop's entry; nothing
// else is changed.
func TestFinishedItemsGetTheLaptopsBits(t *testing.T) {
	app, other, plain := t.TempDir(), t.TempDir(), t.TempDir()
	fake := newFakeSyncthing(t)
	for name, mode := range map[string]os.FileMode{
		"run.sh": 0o644, "tool/bin": 0o644, "was-exec": 0o755, "own.sh": 0o644, "noperms.sh": 0o644,
		"failed.sh": 0o644, "deleted.sh": 0o644, "symlinked": 0o644,
	} {
		file(t, filepath.Join(app, name), mode)
	}
	file(t, filepath.Join(other, "x.sh"), 0o644)
	file(t, filepath.Join(plain, "y.sh"), 0o644)
	must(t, os.Symlink("symlinked", filepath.Join(app, "link")))
	must(t, os.Chmod(filepath.Join(app, "tool"), 0o755))

	fake.set("app", "run.sh", typeFile, "0755", laptop)
	fake.set("app", "tool/bin", typeFile, "0750", laptop)
	fake.set("app", "tool", typeDir, "0700", laptop)
	fake.set("app", "was-exec", typeFile, "0644", laptop) // chmod -x on the laptop
	fake.set("app", "own.sh", typeFile, "0755", "SELFSEL")
	fake.set("app", "noperms.sh", typeFile, "", laptop)
	fake.set("app", "failed.sh", typeFile, "0755", laptop)
	fake.set("app", "deleted.sh", typeFile, "0755", laptop)
	fake.set("app", "link", "FILE_INFO_TYPE_SYMLINK", "0755", laptop)
	fake.set("other", "x.sh", typeFile, "0755", laptop)
	fake.set("plain", "y.sh", typeFile, "0755", laptop)
	startApplier(t, fake, permFolder("app", app), permFolder("other", other), config.Folder{ID: "plain", Path: plain})

	fake.finished("app", "run.sh", "file", "update", "")
	fake.finished("app", "tool/bin", "file", "update", "")
	fake.finished("app", "tool", "dir", "update", "")
	fake.finished("app", "was-exec", "file", "metadata", "")
	fake.finished("app", "own.sh", "file", "update", "")
	fake.finished("app", "noperms.sh", "file", "update", "")
	fake.finished("app", "failed.sh", "file", "update", "no space left")
	fake.finished("app", "deleted.sh", "file", "delete", "")
	fake.finished("app", "link", "symlink", "update", "")
	fake.finished("plain", "y.sh", "file", "update", "") // Syncthing applies bits there itself
	fake.finished("other", "x.sh", "file", "update", "")

	waitMode(t, filepath.Join(app, "run.sh"), 0o755)
	waitMode(t, filepath.Join(app, "tool"), 0o700)
	waitMode(t, filepath.Join(app, "was-exec"), 0o644)
	waitMode(t, filepath.Join(other, "x.sh"), 0o755)
	// The directory came last, so the file below it was reachable.
	must(t, os.Chmod(filepath.Join(app, "tool"), 0o755))
	if got := modeOf(t, filepath.Join(app, "tool/bin")); got != 0o750 {
		t.Errorf("tool/bin: %v, want 0750", got)
	}
	for _, name := range []string{"own.sh", "noperms.sh", "failed.sh", "deleted.sh", "symlinked"} {
		if got := modeOf(t, filepath.Join(app, name)); got != 0o644 {
			t.Errorf("%s: %v, want it left 0644", name, got)
		}
	}
	if got := modeOf(t, filepath.Join(plain, "y.sh")); got != 0o644 {
		t.Errorf("a folder that keeps permissions was changed: %v", got)
	}
	for _, name := range []string{"failed.sh", "deleted.sh", "link"} {
		if n := fake.lookupsOf("app", name); n != 0 {
			t.Errorf("%s looked up %d times, want never", name, n)
		}
	}
	if n := fake.lookupsOf("plain", "y.sh"); n != 0 {
		t.Errorf("folder plain looked up")
	}
}

// A checkout on the laptop: thousands of events, some items twice. Each
// item is looked up once per batch at most, and all get their bits.
func TestBurstIsAppliedInBatches(t *testing.T) {
	app := t.TempDir()
	const n = 5000
	for i := range n {
		file(t, filepath.Join(app, fmt.Sprintf("d%02d/f%04d", i%50, i)), 0o644)
	}
	// After the files (making 5,000 can take over a second): they are older than this Syncthing,
	// so the walk at the subscription looks none of them up, and every lookup is an event's.
	fake := newFakeSyncthing(t)
	for i := range n {
		name := fmt.Sprintf("d%02d/f%04d", i%50, i)
		mode := "0644"
		if i%10 == 0 {
			mode = "0755"
		}
		fake.set("app", name, typeFile, mode, laptop)
	}
	startApplier(t, fake, permFolder("app", app))
	start := time.Now()
	for i := range n {
		name := fmt.Sprintf("d%02d/f%04d", i%50, i)
		fake.finished("app", name, "file", "update", "")
		if i%3 == 0 {
			fake.finished("app", name, "file", "metadata", "")
		}
	}
	last := filepath.Join(app, fmt.Sprintf("d%02d/f%04d", (n-10)%50, n-10))
	waitMode(t, last, 0o755)
	testutil.Eventually(t, 10*time.Second, "all looked up", func() error {
		for i := range n {
			if fake.lookupsOf("app", fmt.Sprintf("d%02d/f%04d", i%50, i)) == 0 {
				return fmt.Errorf("item %d not looked up yet", i)
			}
		}
		return nil
	})
	t.Logf("%d events, %d items applied in %s, %d requests for events", n+n/3+1, n, time.Since(start).Round(time.Millisecond), fake.requestsTo("/rest/events"))
	total := 0
	for i := range n {
		name := fmt.Sprintf("d%02d/f%04d", i%50, i)
		total += fake.lookupsOf("app", name)
		want := os.FileMode(0o644)
		if i%10 == 0 {
			want = 0o755
		}
		if got := modeOf(t, filepath.Join(app, name)); got != want {
			t.Fatalf("%s: %v, want %v", name, got, want)
		}
	}
	// Twice for an item at most: its two events may land in two batches.
	if total > n+n/3+1 {
		t.Errorf("%d lookups for %d items", total, n)
	}
}

// A restarted Syncthing numbers its events from 1 again: events after
// the restart are applied whether the restart cut the long poll or came
// between two polls, and an item pulled before the new subscription (no
// event seen) is found by its change time.
func TestRestartedSyncthingIsFollowed(t *testing.T) {
	for _, cut := range []bool{true, false} {
		t.Run(fmt.Sprintf("cut=%v", cut), func(t *testing.T) {
			app := t.TempDir()
			fake := newFakeSyncthing(t)
			file(t, filepath.Join(app, "before.sh"), 0o644)
			file(t, filepath.Join(app, "old.sh"), 0o644)
			fake.set("app", "before.sh", typeFile, "0755", laptop)
			fake.set("app", "after.sh", typeFile, "0755", laptop)
			fake.set("app", "unseen.sh", typeFile, "0755", laptop)
			fake.set("app", "old.sh", typeFile, "0755", laptop)
			logs := startApplier(t, fake, permFolder("app", app))
			for range 5 { // IDs the new Syncthing will reuse
				fake.finished("app", "before.sh", "file", "update", "")
			}
			waitMode(t, filepath.Join(app, "before.sh"), 0o755)

			time.Sleep(3 * ctimeSlack / 2) // old.sh's change is well before the restart
			fake.restart(cut)
			file(t, filepath.Join(app, "unseen.sh"), 0o644) // pulled, its event lost
			file(t, filepath.Join(app, "after.sh"), 0o644)
			fake.finished("app", "after.sh", "file", "update", "")
			waitMode(t, filepath.Join(app, "after.sh"), 0o755)
			waitMode(t, filepath.Join(app, "unseen.sh"), 0o755)
			if !strings.Contains(logs.String(), "Syncthing restarted") {
				t.Errorf("no restart logged:\n%s", logs.String())
			}
			if got := modeOf(t, filepath.Join(app, "old.sh")); got != 0o644 {
				t.Errorf("old.sh, unchanged since long before the restart, was looked up and set: %v", got)
			}
		})
	}
}

// Lost events (IDs skip) are made up for by a walk: items changed since
// the last event seen are looked up, older ones are not.
func TestLostEventsAreMadeUpByAWalk(t *testing.T) {
	app := t.TempDir()
	fake := newFakeSyncthing(t)
	file(t, filepath.Join(app, "old.sh"), 0o644)
	fake.set("app", "old.sh", typeFile, "0755", laptop)
	fake.set("app", "seen.sh", typeFile, "0755", laptop)
	fake.set("app", "lost/one.sh", typeFile, "0755", laptop)
	fake.set("app", "lost", typeDir, "0700", laptop)
	logs := startApplier(t, fake, permFolder("app", app))
	time.Sleep(3 * ctimeSlack / 2) // old.sh and the subscription are well in the past
	file(t, filepath.Join(app, "seen.sh"), 0o644)
	fake.finished("app", "seen.sh", "file", "update", "")
	waitMode(t, filepath.Join(app, "seen.sh"), 0o755)

	file(t, filepath.Join(app, "lost/one.sh"), 0o644)
	fake.skipEvents(3)
	fake.finished("app", "seen.sh", "file", "metadata", "")
	waitMode(t, filepath.Join(app, "lost"), 0o700)
	must(t, os.Chmod(filepath.Join(app, "lost"), 0o755))
	waitMode(t, filepath.Join(app, "lost/one.sh"), 0o755)
	if !strings.Contains(logs.String(), "missed 3 of Syncthing's events") {
		t.Errorf("the gap was not logged:\n%s", logs.String())
	}
	if n := fake.lookupsOf("app", "old.sh"); n != 0 {
		t.Errorf("old.sh looked up %d times, want never (its change time is before the gap)", n)
	}
}

// A Syncthing that is down or answers errors: logged once a minute at
// most; items it could not be asked about are applied when it is back;
// the applier keeps going.
func TestSyncthingDownAndErrors(t *testing.T) {
	app := t.TempDir()
	fake := newFakeSyncthing(t)
	for _, name := range []string{"a.sh", "b.sh", "c.sh"} {
		file(t, filepath.Join(app, name), 0o644)
		fake.set("app", name, typeFile, "0755", laptop)
	}
	logs := startApplier(t, fake, permFolder("app", app))

	// An error answer for a.sh: dropped with a line, not asked again.
	fake.mu.Lock()
	fake.failFiles = 1
	fake.mu.Unlock()
	fake.finished("app", "a.sh", "file", "update", "")
	fake.finished("app", "b.sh", "file", "update", "")
	waitMode(t, filepath.Join(app, "b.sh"), 0o755)
	if got := modeOf(t, filepath.Join(app, "a.sh")); got != 0o644 {
		t.Errorf("a.sh: %v after an error answer", got)
	}
	testutil.WaitLog(t, logs, "looking up a.sh: 500")

	// Down: nothing answers for a while, then it is back (same start).
	fake.setDown(true)
	time.Sleep(300 * time.Millisecond)
	fake.setDown(false)
	fake.finished("app", "c.sh", "file", "update", "")
	waitMode(t, filepath.Join(app, "c.sh"), 0o755)
	if n := strings.Count(logs.String(), "failed"); n > 1 {
		t.Errorf("%d failure lines within a minute, want at most 1:\n%s", n, logs.String())
	}
}

// Idle, the applier makes a request for events per poll timeout and a
// status request after each, nothing else.
func TestIdleCostsAPollAMinute(t *testing.T) {
	app := t.TempDir()
	fake := newFakeSyncthing(t)
	startApplier(t, fake, permFolder("app", app)) // PollTimeout 1s
	before := fake.requestsTo("/rest/events") + fake.requestsTo("/rest/system/status")
	time.Sleep(3 * time.Second)
	after := fake.requestsTo("/rest/events") + fake.requestsTo("/rest/system/status")
	if n := after - before; n < 4 || n > 8 {
		t.Errorf("%d requests in 3 s with a 1 s poll timeout, want about 6", n)
	}
	if n := fake.requestsTo("/rest/db/file"); n != 0 {
		t.Errorf("%d lookups while nothing happened", n)
	}
}

// No folder ignores permissions: no event stream at all.
func TestNothingToDoWithoutIgnorePerms(t *testing.T) {
	fake := newFakeSyncthing(t)
	done := make(chan struct{})
	go func() {
		defer close(done)
		Run(t.Context(), Options{Folders: []config.Folder{{ID: "app", Path: t.TempDir()}},
			GUIAddress: fake.srv.Listener.Addr().String(), APIKey: testAPIKey})
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return")
	}
	if n := fake.requestsTo("/rest/events") + fake.requestsTo("/rest/system/status"); n != 0 {
		t.Errorf("%d requests", n)
	}
}

// A panic in a loop is logged and the loop started again.
func TestPanicIsRecovered(t *testing.T) {
	logs := &testutil.SafeBuffer{}
	a := &applier{opts: Options{RetryInterval: time.Millisecond, Logf: func(f string, args ...any) { fmt.Fprintf(logs, f+"\n", args...) }}}
	ctx, cancel := context.WithCancel(t.Context())
	runs := 0
	a.keepRunning(ctx, func(context.Context) {
		runs++
		if runs == 1 {
			var m map[string]int
			m["boom"]++ // panics: assignment to a nil map
		}
		cancel()
	})
	if runs != 2 || !strings.Contains(logs.String(), "perms: internal error") {
		t.Fatalf("%d runs, log:\n%s", runs, logs.String())
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestPlainName(t *testing.T) {
	for name, want := range map[string]bool{
		"a": true, "a/b.sh": true, ".git/hooks/pre-commit": true, "..a": true,
		"": false, "/abs": false, "a//b": false, "a/./b": false, "a/../b": false, "..": false, "a/": false, "a\x00b": false,
	} {
		if got := plainName(name); got != want {
			t.Errorf("plainName(%q) = %v, want %v", name, got, want)
		}
	}
}
