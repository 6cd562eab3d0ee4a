package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/m1nd/m1nd/testkit/gittest"
)

// TestClock: what an invocation writes is stamped by IOStreams.Now, and by
// the system clock when Now is nil, whatever the environment says (the
// testscripts' M1ND_TEST_NOW is read by their test binary, never here).
func TestClock(t *testing.T) {
	g := gittest.Init(t, "brain")
	t.Setenv("M1ND_TEST_NOW", "2001-01-01T00:00:00Z")
	send := func(what string, now func() time.Time) time.Time {
		t.Helper()
		var out, errOut bytes.Buffer
		args := []string{"m1nd", "-C", g.Dir, "mail", "send", "--to", "bob", "--what", what, "--agent", "alice"}
		if code := Main(context.Background(), args, &IOStreams{In: strings.NewReader(""), Out: &out, Err: &errOut, Now: now}, wholeCLI); code != 0 {
			t.Fatalf("mail send: exit %d\n%s%s", code, out.String(), errOut.String())
		}
		var letter struct{ TS string }
		if err := json.Unmarshal([]byte(g.Git("cat-file", "blob", "refs/m1nd/mail/bob/alice:mail.json")), &letter); err != nil {
			t.Fatal(err)
		}
		ts, err := time.Parse(time.RFC3339, letter.TS)
		if err != nil {
			t.Fatalf("ts %q: %v", letter.TS, err)
		}
		return ts
	}

	at := time.Date(2026, 7, 9, 12, 0, 0, 0, time.UTC)
	if got := send("fixed", func() time.Time { return at }); !got.Equal(at) {
		t.Errorf("with IOStreams.Now: ts %v, want %v", got, at)
	}
	before := time.Now().Add(-time.Second)
	if got := send("system", nil); got.Before(before) || got.After(time.Now().Add(time.Second)) {
		t.Errorf("without IOStreams.Now: ts %v, want the system clock (about %v)", got, before)
	}
}
