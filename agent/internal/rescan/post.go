package rescan

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// scanRequestTimeout bounds one POST /rest/db/scan. Syncthing answers
// when the scan is done (after a pull in progress, for a whole folder
// after walking it), so this is long; it only guards against a Syncthing
// that hangs without being restarted.
const scanRequestTimeout = 5 * time.Minute

// scanClient posts scan requests to Syncthing's REST API.
type scanClient struct {
	baseURL string
	apiKey  string
	http    *http.Client
	log     *throttledLog
}

func newScanClient(guiAddress, apiKey string, log *throttledLog) *scanClient {
	base := guiAddress
	if !strings.Contains(base, "://") {
		base = "http://" + base
	}
	return &scanClient{
		baseURL: strings.TrimSuffix(base, "/"),
		apiKey:  apiKey,
		log:     log,
		http: &http.Client{
			Timeout: scanRequestTimeout,
			Transport: &http.Transport{
				Proxy: nil, // the API is local; never route it through $HTTP_PROXY
				// Loopback: a connect that does not succeed at once means
				// Syncthing is down, not slow.
				DialContext:         (&net.Dialer{Timeout: 2 * time.Second}).DialContext,
				MaxIdleConnsPerHost: 4, // one kept-alive connection per folder's sender
				IdleConnTimeout:     time.Minute,
			},
		},
	}
}

// scan posts one scan request. Failures are logged (throttled) and
// dropped: Syncthing may be starting or restarting, and its own watcher
// and periodic rescan still pick the change up, only later.
func (c *scanClient) scan(ctx context.Context, folderID, query string) {
	err := c.post(ctx, query)
	if err != nil && ctx.Err() == nil {
		c.log.printf("scan request for folder %s failed: %v (Syncthing's own watcher still syncs the change, only later)", folderID, err)
	}
}

func (c *scanClient) post(ctx context.Context, query string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.baseURL+"/rest/db/scan?"+query, nil)
	if err != nil {
		return err
	}
	req.Header.Set("X-API-Key", c.apiKey)
	resp, err := c.http.Do(req)
	if err != nil {
		var uerr *url.Error
		if errors.As(err, &uerr) {
			err = uerr.Err // without the URL: it repeats every path
		}
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", resp.Status, strings.TrimSpace(string(body)))
	}
	return nil
}

// throttledLog logs at most one line per interval, and says how many it
// held back: a Syncthing that is down for minutes would otherwise fill
// the supervisor log with one line per saved file.
type throttledLog struct {
	logf     func(format string, args ...any)
	interval time.Duration

	mu      sync.Mutex
	last    time.Time
	dropped int
}

func newThrottledLog(logf func(string, ...any), interval time.Duration) *throttledLog {
	return &throttledLog{logf: logf, interval: interval}
}

func (t *throttledLog) printf(format string, args ...any) {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := time.Now()
	if !t.last.IsZero() && now.Sub(t.last) < t.interval {
		t.dropped++
		return
	}
	msg := fmt.Sprintf(format, args...)
	if t.dropped > 0 {
		msg += fmt.Sprintf(" [%d similar messages not logged in the last %s]", t.dropped, now.Sub(t.last).Round(time.Second))
	}
	t.last, t.dropped = now, 0
	t.logf("rescan: %s", msg)
}
