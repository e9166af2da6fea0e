// Package stapi is the agent's client of its own Syncthing's REST API
// (loopback, X-API-Key), shared by the rescanner and the permission
// applier, and the throttled logging both use for its failures.
package stapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Client calls one Syncthing's REST API.
type Client struct {
	baseURL string
	apiKey  string
	http    *http.Client
}

// NewClient returns a client of the API at guiAddress (host:port, or a
// URL). timeout bounds each request, including reading its answer.
func NewClient(guiAddress, apiKey string, timeout time.Duration) *Client {
	base := guiAddress
	if !strings.Contains(base, "://") {
		base = "http://" + base
	}
	return &Client{
		baseURL: strings.TrimSuffix(base, "/"),
		apiKey:  apiKey,
		http: &http.Client{
			Timeout: timeout,
			Transport: &http.Transport{
				Proxy: nil, // the API is local; never route it through $HTTP_PROXY
				// Loopback: a connect that does not succeed at once means
				// Syncthing is down, not slow.
				DialContext:         (&net.Dialer{Timeout: 2 * time.Second}).DialContext,
				MaxIdleConnsPerHost: 4, // a kept-alive connection per concurrent caller
				IdleConnTimeout:     time.Minute,
			},
		},
	}
}

// StatusError is an answer other than 200 OK.
type StatusError struct {
	Code int
	Body string // its start, trimmed
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("%d %s: %s", e.Code, http.StatusText(e.Code), e.Body)
}

// Do sends one request (rawQuery already encoded, may be empty) and, if
// out is not nil, decodes the JSON answer into it. Errors name neither
// the URL nor the key: the query may repeat every changed path.
func (c *Client) Do(ctx context.Context, method, path, rawQuery string, out any) error {
	u := c.baseURL + path
	if rawQuery != "" {
		u += "?" + rawQuery
	}
	req, err := http.NewRequestWithContext(ctx, method, u, nil)
	if err != nil {
		return err
	}
	req.Header.Set("X-API-Key", c.apiKey)
	resp, err := c.http.Do(req)
	if err != nil {
		var uerr *url.Error
		if errors.As(err, &uerr) {
			err = uerr.Err
		}
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return &StatusError{Code: resp.StatusCode, Body: strings.TrimSpace(string(body))}
	}
	if out == nil {
		_, err = io.Copy(io.Discard, resp.Body)
		return err
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("%s: decode answer: %w", path, err)
	}
	// Read what follows the value (a newline): a body closed before its
	// end closes the connection, and every request would dial anew.
	_, err = io.Copy(io.Discard, resp.Body)
	return err
}

// CloseIdleConnections closes kept-alive connections (at the end of a run).
func (c *Client) CloseIdleConnections() { c.http.CloseIdleConnections() }
