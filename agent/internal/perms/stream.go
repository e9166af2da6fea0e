package perms

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// ctimeSlack widens every "changed since" of a catch-up walk: the kernel
// stamps inode change times from a clock that can lag the wall clock a
// little, and a file's last change comes just before its event.
const ctimeSlack = 2 * time.Second

// event is one ItemFinished event: the puller finished an item.
type event struct {
	ID   int       `json:"id"` // per subscription, from 1; starts again when Syncthing does
	Time time.Time `json:"time"`
	Data struct {
		Folder string  `json:"folder"`
		Item   string  `json:"item"`
		Type   string  `json:"type"`   // file, dir, symlink
		Action string  `json:"action"` // update, metadata, delete
		Error  *string `json:"error"`
	} `json:"data"`
}

// follow reads Syncthing's ItemFinished events and queues the items whose
// bits may have to be set. Where events may have been lost it queues a
// catch-up walk instead (queue.catchUp): items changed on disk since then
// are looked up too.
//
// Events are lost when Syncthing (re)starts: the subscription, with the
// 1,000 events it keeps, exists from the first request for it on, and a
// new Syncthing numbers events from 1 again. So follow asks for
// /rest/system/status first and starts over whenever its startTime is a
// new one: it subscribes (an answer at once), walks for what changed since
// that start, then long-polls. A failed request or an empty answer (the
// poll timed out) sends it back to the status check, so a restart is
// noticed within a poll. startTime is whole seconds, so a Syncthing that
// restarts within the second it started (ours start in some 60 ms) has the
// same one: a failed request is therefore taken for a restart too, and the
// walk then covers what changed since the last event seen. Events are also
// lost when more than 1,000 arrive between two polls, or Syncthing drops
// some: the IDs then skip, and the walk covers the same.
func (a *applier) follow(ctx context.Context) {
	var started string // startTime of the Syncthing followed
	since := 0         // last event ID seen
	var sinceTime time.Time
	lost := false // a request failed since the last subscription: maybe a restart
	for ctx.Err() == nil {
		var status struct {
			StartTime string `json:"startTime"`
		}
		if err := a.api.Do(ctx, http.MethodGet, "/rest/system/status", "", &status); err != nil {
			if ctx.Err() == nil {
				a.failures.Printf("Syncthing's API does not answer (%v); retrying", err)
				a.sleep(ctx)
			}
			lost = true
			continue
		}
		if status.StartTime != started || lost {
			evs, err := a.poll(ctx, 0, 0) // subscribes, answers at once
			if err != nil {
				if ctx.Err() == nil {
					a.failures.Printf("reading Syncthing's events failed: %v; retrying", err)
					a.sleep(ctx)
				}
				lost = true
				continue
			}
			startTime, perr := time.Parse(time.RFC3339Nano, status.StartTime)
			if perr != nil {
				startTime = time.Now().Add(-time.Hour) // cannot happen; walk generously
			}
			from := startTime
			switch {
			case started != "" && status.StartTime != started:
				a.opts.Logf("perms: Syncthing restarted (%s); looking for items changed since", status.StartTime)
			case started != "":
				// Not known to be a restart: the walk covers the gap since the last event seen,
				// as for events lost between two polls (handle).
				a.opts.Logf("perms: Syncthing's events were cut off (a restart within its start's second, or a dropped request); looking for items changed since the last one")
				if !sinceTime.IsZero() && sinceTime.Before(from) {
					from = sinceTime
				}
			}
			started, since, sinceTime, lost = status.StartTime, 0, startTime, false
			a.queue.catchUp(from.Add(-ctimeSlack))
			since, sinceTime = a.handle(evs, since, sinceTime)
		}
		for ctx.Err() == nil {
			evs, err := a.poll(ctx, since, a.opts.PollTimeout)
			if err != nil {
				if ctx.Err() == nil {
					a.failures.Printf("reading Syncthing's events failed: %v; retrying", err)
					a.sleep(ctx)
				}
				lost = true
				break
			}
			if len(evs) == 0 {
				break // timed out: is it still the same Syncthing?
			}
			since, sinceTime = a.handle(evs, since, sinceTime)
		}
	}
}

// poll asks for the ItemFinished events after since, waiting up to
// timeout for the first.
func (a *applier) poll(ctx context.Context, since int, timeout time.Duration) ([]event, error) {
	q := url.Values{
		"events":  {"ItemFinished"},
		"since":   {strconv.Itoa(since)},
		"timeout": {strconv.Itoa(int(timeout / time.Second))},
	}
	var evs []event
	err := a.api.Do(ctx, http.MethodGet, "/rest/events", q.Encode(), &evs)
	return evs, err
}

// handle queues the items of evs and returns the last event's ID and
// time. since is the ID before them (0 right after subscribing, when the
// catch-up walk covers everything before).
func (a *applier) handle(evs []event, since int, sinceTime time.Time) (int, time.Time) {
	if len(evs) == 0 {
		return since, sinceTime
	}
	if since > 0 && evs[0].ID > since+1 {
		a.failures.Printf("missed %d of Syncthing's events (IDs %d to %d); looking for items changed since %s",
			evs[0].ID-since-1, since+1, evs[0].ID-1, sinceTime.Format(time.RFC3339))
		a.queue.catchUp(sinceTime.Add(-ctimeSlack))
	}
	for _, ev := range evs {
		d := ev.Data
		folder, ok := a.index[d.Folder]
		if !ok || d.Error != nil || (d.Type != "file" && d.Type != "dir") || (d.Action != "update" && d.Action != "metadata") {
			continue
		}
		a.queue.add(item{folder: folder, name: d.Item})
	}
	last := evs[len(evs)-1]
	return last.ID, last.Time
}
