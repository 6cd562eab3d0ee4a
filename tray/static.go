package tray

import (
	"embed"
	"io/fs"
	"net/http"
)

// web is the tray's page: plain HTML, CSS and JavaScript, embedded so that
// installing m1nd needs no build step.
//
//go:embed web
var web embed.FS

func staticHandler() http.Handler {
	sub, err := fs.Sub(web, "web")
	if err != nil {
		panic(err) // the embedded tree always has web/
	}
	files := http.FileServer(http.FS(sub))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; connect-src 'self'; frame-ancestors 'none'")
		w.Header().Set("Cache-Control", "no-cache")
		files.ServeHTTP(w, r)
	})
}
