package trayclient

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/m1nd/m1nd/internal/loopback"
	"github.com/m1nd/m1nd/internal/wire"
)

// maxReply caps what a client reads of an answer.
const maxReply = 4 << 20

// Client calls the owner's HTTP API as a local process: no Origin
// header (the owner takes writes from its own page or from no page at
// all), JSON in and out. The CLI's spawn and runnerd's announce use it.
type Client struct {
	// URL is the owner's base URL, e.g. http://127.0.0.1:7420.
	URL string
	// Secret, when set, goes in loopback.SecretHeader: runnerd's calls carry it.
	Secret string
	// Timeout bounds one call; 30 s when 0.
	Timeout time.Duration
}

// ClientFor is the client of the owner at url, or, when url is "", of the
// owner recorded in runtimeDir's serve.json. ok is false when neither
// names a live owner.
func ClientFor(runtimeDir, url string) (c *Client, ok bool) {
	url = strings.TrimSuffix(url, "/")
	if url == "" {
		url = Find(runtimeDir)
	}
	if url == "" {
		return nil, false
	}
	return &Client{URL: url}, true
}

// StatusError is an answer from the owner that is neither a success nor a
// refusal: its status and what it said.
type StatusError struct {
	URL    string
	Status int
	Body   string
}

// Error says who answered what.
func (e *StatusError) Error() string {
	if e.Body == "" {
		return fmt.Sprintf("the owner at %s answered %d", e.URL, e.Status)
	}
	return fmt.Sprintf("the owner at %s answered %d: %s", e.URL, e.Status, e.Body)
}

// Post sends in as JSON to path and decodes a 200 answer into out. A
// refusal the owner answers (its own, or runnerd's it passed on: both the
// DESIGN §5 envelope) comes back as that *gates.Refusal, so a CLI prints
// and exits as for its own; any other answer is a *StatusError.
func (c *Client) Post(ctx context.Context, path string, in, out any) error {
	body, err := json.Marshal(in)
	if err != nil {
		return fmt.Errorf("encode the request to %s: %w", path, err)
	}
	timeout := c.Timeout
	if timeout == 0 {
		timeout = 30 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, "POST", c.URL+path, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("call the owner at %s: %w", c.URL, err)
	}
	req.Header.Set("Content-Type", "application/json")
	if c.Secret != "" {
		req.Header.Set(loopback.SecretHeader, c.Secret)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("the owner at %s did not answer: %w", c.URL, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxReply))
	if err != nil {
		return fmt.Errorf("the owner at %s: read the answer: %w", c.URL, err)
	}
	if r, ok := loopback.ReadRefusal(data); ok {
		return r
	}
	if resp.StatusCode != http.StatusOK || json.Unmarshal(data, out) != nil {
		return &StatusError{URL: c.URL, Status: resp.StatusCode, Body: said(data)}
	}
	return nil
}

// said is an answer's body as an error quotes it: trimmed, and cut after
// a screenful.
func said(data []byte) string {
	data = bytes.TrimSpace(data)
	if len(data) > 2000 {
		return string(data[:2000]) + "…"
	}
	return string(data)
}

// Spawn asks the owner to hand a mission to a live pinned build-runner.
func (c *Client) Spawn(ctx context.Context, req wire.SpawnRequest) (*wire.RunReply, error) {
	var reply wire.RunReply
	if err := c.Post(ctx, wire.PathMissionSpawn, req, &reply); err != nil {
		return nil, err
	}
	return &reply, nil
}

// Announce tells the owner which runners are alive; c.Secret
// authenticates runnerd.
func (c *Client) Announce(ctx context.Context, a wire.Announce) (*wire.AnnounceReply, error) {
	var reply wire.AnnounceReply
	if err := c.Post(ctx, wire.PathAnnounce, a, &reply); err != nil {
		return nil, err
	}
	return &reply, nil
}
