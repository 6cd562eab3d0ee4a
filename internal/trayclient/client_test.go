package trayclient

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/m1nd/m1nd/internal/loopback"
	"github.com/m1nd/m1nd/internal/wire"
	"github.com/m1nd/m1nd/rules"
)

// The owner client reads a 200 into the reply, a refusal back as the same
// *rules.Refusal, and anything else as a StatusError; runnerd's calls carry
// the secret, the CLI's do not, and neither sends an Origin.
func TestOwnerClient(t *testing.T) {
	var gotSecret, gotOrigin string
	var status int
	var body string
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotSecret, gotOrigin = r.Header.Get(loopback.SecretHeader), r.Header.Get("Origin")
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		w.Write([]byte(body))
	}))
	defer hs.Close()
	ctx := context.Background()

	status, body = 200, `{"accepted":true,"mission_id":"msn_00000000feed","runner_id":"b1"}`
	c := &Client{URL: hs.URL}
	reply, err := c.Spawn(ctx, wire.SpawnRequest{RunnerID: "b1", BlockID: "sb_x_core"})
	if err != nil || !reply.Accepted || reply.MissionID != "msn_00000000feed" || gotSecret != "" || gotOrigin != "" {
		t.Fatalf("spawn: %+v %v (secret %q, origin %q)", reply, err, gotSecret, gotOrigin)
	}

	status, body = 403, `{"ok":false,"refused":"unpinned_runner","field":"runner_id","lesson":"runner b1 is not pinned"}`
	_, err = c.Spawn(ctx, wire.SpawnRequest{RunnerID: "b1"})
	if r, ok := rules.AsRefusal(err); !ok || r.Code != rules.UnpinnedRunner || r.Field != "runner_id" || r.Lesson != "runner b1 is not pinned" {
		t.Fatalf("refusal: %v", err)
	}

	status, body = 401, ``
	c.Secret = "s3cret"
	_, err = c.Announce(ctx, wire.Announce{RunnerIDs: []string{"b1"}, Port: "7421"})
	var se *StatusError
	if !errors.As(err, &se) || se.Status != 401 || gotSecret != "s3cret" {
		t.Fatalf("401: %v (secret %q)", err, gotSecret)
	}

	status, body = 200, `not json`
	if _, err := c.Announce(ctx, wire.Announce{}); !errors.As(err, &se) || se.Status != 200 {
		t.Fatalf("200 that is not JSON: %v", err)
	}
}

func TestOwnerFor(t *testing.T) {
	dir := t.TempDir()
	if c, ok := ClientFor(dir, ""); ok {
		t.Fatalf("no record, no URL: %+v", c)
	}
	if c, ok := ClientFor(dir, "http://127.0.0.1:7420/"); !ok || c.URL != "http://127.0.0.1:7420" {
		t.Fatalf("--owner-url: %+v %v", c, ok)
	}
}
