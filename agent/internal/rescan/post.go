package rescan

import (
	"context"
	"net/http"
	"time"

	"devtool.dev/agent/internal/stapi"
)

// scanRequestTimeout bounds one POST /rest/db/scan. Syncthing answers
// when the scan is done (after a pull in progress, for a whole folder
// after walking it), so this is long; it only guards against a Syncthing
// that hangs without being restarted.
const scanRequestTimeout = 5 * time.Minute

// scanClient posts scan requests to Syncthing's REST API.
type scanClient struct {
	api *stapi.Client
	log *stapi.ThrottledLog
}

func newScanClient(guiAddress, apiKey string, log *stapi.ThrottledLog) *scanClient {
	return &scanClient{api: stapi.NewClient(guiAddress, apiKey, scanRequestTimeout), log: log}
}

// scan posts one scan request. Failures are logged (throttled) and
// dropped: Syncthing may be starting or restarting, and its own watcher
// and periodic rescan still pick the change up, only later.
func (c *scanClient) scan(ctx context.Context, folderID, query string) {
	err := c.api.Do(ctx, http.MethodPost, "/rest/db/scan", query, nil)
	if err != nil && ctx.Err() == nil {
		c.log.Printf("scan request for folder %s failed: %v (Syncthing's own watcher still syncs the change, only later)", folderID, err)
	}
}
