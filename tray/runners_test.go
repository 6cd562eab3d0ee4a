package tray

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/m1nd/m1nd/internal/trayclient"
)

// fakeRunnerd answers every runnerd endpoint with status and body, and
// reports the port it listens on.
func fakeRunnerd(t *testing.T, status int, body string) int {
	t.Helper()
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		w.Write([]byte(body))
	}))
	t.Cleanup(hs.Close)
	u, _ := url.Parse(hs.URL)
	port, _ := strconv.Atoi(u.Port())
	return port
}

// announce registers runner ids as live at port.
func (f *fixture) announce(secret string, port int, ids ...string) {
	f.t.Helper()
	body := fmt.Sprintf(`{"runner_ids":["%s"],"port":"%d","boot_challenge":"c0ffee"}`, strings.Join(ids, `","`), port)
	if status, out := f.do("POST", "/api/runnerd/announce", body, map[string]string{"x-runnerd-secret": secret}); status != 200 {
		f.t.Fatalf("announce: %d %v", status, out)
	}
}

// A refusal runnerd answers on a lane reaches the browser as that same
// envelope and status, never as an internal failure; a runnerd that does
// not answer is a 502.
func TestLanesPassRunnerdRefusalsThrough(t *testing.T) {
	const envelope = `{"ok":false,"refused":"unpinned_runner","field":"runner_id","lesson":"no naming-runner with that id is pinned in runners.toml"}`
	for _, lane := range []struct{ path, runner, capability string }{
		{"/api/naming", "name-1", "naming-runner"},
		{"/api/curate", "hand-1", "hand-runner"},
		{"/api/mission_spawn", "build-1", "build-runner"},
	} {
		t.Run(lane.path, func(t *testing.T) {
			f := newFixture(t, false)
			secret := strings.Repeat("ab", 32)
			f.srv.Pins = trayclient.Pins{Secret: secret, Capabilities: map[string]string{lane.runner: lane.capability}}
			body := fmt.Sprintf(`{"runner_id":%q}`, lane.runner)
			if lane.capability == "build-runner" {
				body = fmt.Sprintf(`{"runner_id":%q,"block_id":"sb_shop_core","packet_markdown":"# p"}`, lane.runner)
			}

			f.announce(secret, fakeRunnerd(t, 403, envelope+"\n"), lane.runner)
			status, out := f.do("POST", lane.path, body, nil)
			if status != 403 || out["ok"] != false || out["refused"] != "unpinned_runner" || out["field"] != "runner_id" ||
				out["lesson"] != "no naming-runner with that id is pinned in runners.toml" {
				t.Fatalf("runnerd's refusal: %d %v", status, out)
			}

			// A runnerd that answers something else is a bad gateway, not ours.
			f.announce(secret, fakeRunnerd(t, 500, `{"ok":false,"error":"internal","lesson":"disk full"}`), lane.runner)
			status, out = f.do("POST", lane.path, body, nil)
			if status != 502 || out["error"] != "runner_failed" || !strings.Contains(out["lesson"].(string), "disk full") {
				t.Fatalf("runnerd failing: %d %v", status, out)
			}

			// Nobody listens on the announced port any more.
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			dead := ln.Addr().(*net.TCPAddr).Port
			ln.Close()
			f.announce(secret, dead, lane.runner)
			status, out = f.do("POST", lane.path, body, nil)
			if status != 502 || out["error"] != "runner_unreachable" || out["lesson"] == "" {
				t.Fatalf("runnerd gone: %d %v", status, out)
			}
			if refs := f.g.Git("for-each-ref", "refs/m1nd/missions/"); refs != "" {
				t.Fatalf("a refused lane wrote %s", refs)
			}
		})
	}
}

// A pinned runner that never announced does not hide a live one of the
// same capability: policy offers spawn with the live one, and a spawn that
// names no runner goes to it.
func TestALostRunnerDoesNotHideALiveOne(t *testing.T) {
	f := newFixture(t, false)
	secret := strings.Repeat("ab", 32)
	f.srv.Pins = trayclient.Pins{Secret: secret, Capabilities: map[string]string{"a-build": "build-runner", "b-build": "build-runner"}}
	var got map[string]any
	runner := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		json.NewDecoder(r.Body).Decode(&got)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"mission_id":"msn_00000000feed","accepted":true,"runner_id":%q}`, got["runner_id"])
	}))
	defer runner.Close()
	ru, _ := url.Parse(runner.URL)
	port, _ := strconv.Atoi(ru.Port())

	// Neither announced: refused, naming why.
	status, out := f.do("POST", "/api/mission_spawn", `{"block_id":"sb_shop_core","packet_markdown":"# p"}`, nil)
	if status != 403 || out["refused"] != "unpinned_runner" || !strings.Contains(out["lesson"].(string), "no pinned build-runner has announced") {
		t.Fatalf("spawn with every runner silent: %d %v", status, out)
	}

	f.announce(secret, port, "b-build") // a-build never starts
	_, policy := f.do("GET", "/api/policy", "", nil)
	if spawn := policy["modes"].(map[string]any)["spawn"].(map[string]any); spawn["available"] != true || fmt.Sprint(policy["build_runners"]) != "[b-build]" {
		t.Fatalf("policy with a-build lost and b-build live: %v", policy)
	}
	status, out = f.do("POST", "/api/mission_spawn", `{"block_id":"sb_shop_core","packet_markdown":"# p"}`, nil)
	if status != 200 || out["accepted"] != true || got["runner_id"] != "b-build" {
		t.Fatalf("spawn without runner_id: %d %v, runnerd got %v", status, out, got)
	}
	// Naming the lost one is still refused, by its name.
	status, out = f.do("POST", "/api/mission_spawn", `{"runner_id":"a-build","block_id":"sb_shop_core","packet_markdown":"# p"}`, nil)
	if status != 403 || out["refused"] != "unpinned_runner" || !strings.Contains(out["lesson"].(string), "runner a-build is pinned but has not announced") {
		t.Fatalf("spawn on the lost runner: %d %v", status, out)
	}
}

// The owner reads runners.toml again when it changes: a runner pinned
// while the owner runs registers at its next announce, with no restart;
// until then the announce reply names it refused and why. A file that no
// longer loads keeps the pins the owner had.
func TestPinsReloadWhenTheFileChanges(t *testing.T) {
	f := newFixture(t, false)
	secret := strings.Repeat("ab", 32)
	file := filepath.Join(t.TempDir(), "runners.toml")
	write := func(text string) {
		t.Helper()
		if err := os.WriteFile(file, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// A stand-in for runners.LoadConfig: one "id capability" a line.
	load := func(path string) (map[string]string, error) {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		caps := map[string]string{}
		for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
			id, capability, ok := strings.Cut(line, " ")
			if !ok {
				return nil, fmt.Errorf("%s: bad line %q", path, line)
			}
			caps[id] = capability
		}
		return caps, nil
	}
	write("build-1 build-runner\n")
	f.srv.Pins = trayclient.Pins{Secret: secret, Capabilities: map[string]string{"build-1": "build-runner"}, File: file, Load: load}
	announce := func() map[string]any {
		t.Helper()
		status, out := f.do("POST", "/api/runnerd/announce", `{"runner_ids":["build-1","build-2"],"port":"7421","boot_challenge":"c0ffee"}`, map[string]string{"x-runnerd-secret": secret})
		if status != 200 {
			t.Fatalf("announce: %d %v", status, out)
		}
		return out
	}
	out := announce()
	if fmt.Sprint(out["registered"]) != "[build-1]" || fmt.Sprint(out["refused"]) != "[map[runner_id:build-2 why:not pinned in runners.toml]]" {
		t.Fatalf("before build-2 is pinned: %v", out)
	}

	write("build-1 build-runner\nbuild-2 build-runner\n")
	out = announce()
	if fmt.Sprint(out["registered"]) != "[build-1 build-2]" || out["refused"] != nil {
		t.Fatalf("after build-2 is pinned: %v", out)
	}
	if _, _, err := f.srv.liveRunner("build-2", "build-runner"); err != nil {
		t.Fatalf("build-2 after its announce: %v", err)
	}

	write("not a pin file at all, this line has spaces but\nnone")
	out = announce()
	if fmt.Sprint(out["registered"]) != "[build-1 build-2]" {
		t.Fatalf("a file that does not load keeps the pins: %v", out)
	}
}
