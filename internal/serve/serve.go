// Package serve runs m1nd's loopback HTTP servers (the owner and the
// runner daemon) until their context ends.
package serve

import (
	"context"
	"errors"
	"net"
	"net/http"
	"time"
)

// Run serves srv on ln until ctx ends, then shuts it down, giving open
// requests a few seconds, and returns nil; a server that fails returns its
// error.
func Run(ctx context.Context, srv *http.Server, ln net.Listener) error {
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case <-ctx.Done():
		shut, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		srv.Shutdown(shut)
		return nil
	case err := <-errc:
		if errors.Is(err, http.ErrServerClosed) {
			return nil
		}
		return err
	}
}
