package trayclient

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/m1nd/m1nd/rules"
)

// BrainAt asks the server listening on addr which brain it owns, as the
// tray's own page does (GET /api/status, Host localhost:port); "" when it
// does not answer as an m1nd owner within a second. It tells a second
// owner whose port is taken who holds it.
func BrainAt(ctx context.Context, addr string) string {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return ""
	}
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/api/status", nil)
	if err != nil {
		return ""
	}
	req.Host = "localhost:" + port
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	var status struct {
		OK    bool   `json:"ok"`
		Brain string `json:"brain"`
	}
	if json.NewDecoder(io.LimitReader(resp.Body, 1<<16)).Decode(&status) != nil || !status.OK {
		return ""
	}
	return rules.Clip(status.Brain)
}
