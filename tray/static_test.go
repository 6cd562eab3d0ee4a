package tray

import (
	"io"
	"net/http/httptest"
	"strings"
	"testing"
)

// The page's highlighter is highlight.js as published (vendor/highlight),
// served from the tray itself under the same policy as the page: no
// script comes from anywhere else.
func TestStaticServesTheEmbeddedHighlighter(t *testing.T) {
	h := staticHandler()
	for _, tc := range []struct{ path, want string }{
		{"/vendor/highlight/highlight.min.js", "Highlight.js v11.12.0"},
		{"/vendor/highlight/LICENSE", "BSD 3-Clause License"},
		{"/vendor/highlight/github.min.css", ".hljs"},
		{"/", `<script src="vendor/highlight/highlight.min.js" defer></script>`},
	} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", tc.path, nil))
		body, _ := io.ReadAll(rec.Body)
		if rec.Code != 200 || !strings.Contains(string(body), tc.want) {
			t.Errorf("GET %s: %d, want %q in it", tc.path, rec.Code, tc.want)
		}
		if csp := rec.Header().Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") {
			t.Errorf("GET %s: Content-Security-Policy %q", tc.path, csp)
		}
	}
}
