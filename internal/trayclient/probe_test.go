package trayclient

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestBrainAt(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		want       string
	}{
		{"an m1nd owner", `{"ok":true,"brain":"shop","missions":2}`, "shop"},
		{"a refusal", `{"ok":false,"refused":"bad_host"}`, ""},
		{"another program", `<html>hello</html>`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path != "/api/status" || !strings.HasPrefix(r.Host, "localhost:") {
					http.NotFound(w, r)
					return
				}
				w.Write([]byte(tc.body))
			}))
			defer srv.Close()
			if got := BrainAt(context.Background(), strings.TrimPrefix(srv.URL, "http://")); got != tc.want {
				t.Fatalf("BrainAt = %q, want %q", got, tc.want)
			}
		})
	}
	if got := BrainAt(context.Background(), "not an address"); got != "" {
		t.Fatalf("BrainAt of no address = %q", got)
	}
}
