package tray

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/m1nd/m1nd/gitstore"
	"github.com/m1nd/m1nd/testkit/gittest"
)

// FuzzWriteBodies: whatever body a write endpoint is sent, the owner
// answers JSON with a status it documents — never a panic, never a 500 for
// bad input.
func FuzzWriteBodies(f *testing.F) {
	g := gittest.Init(f, "fuzz")
	repo, err := gitstore.Open(g.Dir)
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { repo.Close() })
	srv := New(repo, "fuzz", false)
	srv.SetPort("7420")
	h := srv.Handler()
	paths := []string{"/api/mission_post", "/api/mission_new", "/api/gesture/options", "/api/gesture/commit", "/api/candidate_edit"}
	for _, seed := range []string{`{}`, `{"agent_id":"owner","letter":{}}`, `{"expected_store_version":0,"by":"owner","ops":[]}`,
		`{"gesture":"receipt_import","receipt":[]}`, `{"gesture":"ratify","expected_store_version":-1}`, `{"gesture_id":"x","credential":{"id":"y"}}`, `[`, `null`, `{"letter":"x","agent_id":"a"}`} {
		for i := range paths {
			f.Add(uint8(i), seed)
		}
	}
	f.Fuzz(func(t *testing.T, which uint8, body string) {
		path := paths[int(which)%len(paths)]
		req := httptest.NewRequest("POST", "http://127.0.0.1:7420"+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		switch rec.Code {
		case http.StatusOK, http.StatusForbidden, http.StatusConflict, http.StatusUnprocessableEntity:
		default:
			t.Fatalf("%s %q: status %d: %s", path, body, rec.Code, rec.Body)
		}
		var out map[string]any
		if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
			t.Fatalf("%s %q: reply is not JSON: %s", path, body, rec.Body)
		}
	})
}
