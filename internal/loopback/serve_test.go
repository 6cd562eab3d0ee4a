package loopback

import (
	"errors"
	"net/http/httptest"
	"testing"

	"github.com/m1nd/m1nd/rules"
)

// One writer: a refusal is the envelope with its §5 status, a Failure its
// own status, anything else a 500; a proxy reads the envelope back as the
// same refusal.
func TestWriteErrAndReadRefusal(t *testing.T) {
	for _, tt := range []struct {
		err    error
		status int
		body   string
	}{
		{rules.Refusef(rules.UnpinnedRunner, "runner_id", "runner x is not pinned"), 403, `{"ok":false,"refused":"unpinned_runner","field":"runner_id","lesson":"runner x is not pinned"}`},
		{rules.Refuse(rules.StaleHead, ""), 409, `{"ok":false,"refused":"stale_head","lesson":"` + rules.Lesson(rules.StaleHead) + `"}`},
		{rules.Refuse(rules.UnknownBlock, "block_id"), 422, `{"ok":false,"refused":"unknown_block","field":"block_id","lesson":"` + rules.Lesson(rules.UnknownBlock) + `"}`},
		{Fail(502, "runner_unreachable", "the runner daemon did not answer"), 502, `{"ok":false,"error":"runner_unreachable","lesson":"the runner daemon did not answer"}`},
		{errors.New("disk full"), 500, `{"ok":false,"error":"internal","lesson":"disk full"}`},
	} {
		w := httptest.NewRecorder()
		WriteErr(w, tt.err)
		if w.Code != tt.status || w.Body.String() != tt.body+"\n" {
			t.Errorf("%v: %d %s, want %d %s", tt.err, w.Code, w.Body, tt.status, tt.body)
		}
		got, ok := ReadRefusal(w.Body.Bytes())
		want, isRefusal := rules.AsRefusal(tt.err)
		if ok != isRefusal || ok && *got != *want {
			t.Errorf("%v: read back %v %v", tt.err, got, ok)
		}
	}
	for _, body := range []string{`{"ok":false,"refused":"no_such_code","lesson":"x"}`, `{"refused":"stale_head"}`, `{"ok":true,"refused":"stale_head"}`, `not json`} {
		if r, ok := ReadRefusal([]byte(body)); ok {
			t.Errorf("%s read as %v", body, r)
		}
	}
}
