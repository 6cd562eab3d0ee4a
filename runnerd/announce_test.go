package runnerd

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/m1nd/m1nd/internal/loopback"
	"github.com/m1nd/m1nd/internal/trayclient"
	"github.com/m1nd/m1nd/internal/wire"
	"github.com/m1nd/m1nd/runners"
)

// fakeOwner answers announces like the owner: it echoes the challenge,
// registers the pinned ids and refuses the rest; it counts the announces.
type fakeOwner struct {
	*httptest.Server
	announces atomic.Int32
}

func newFakeOwner(t *testing.T, pinned ...string) *fakeOwner {
	o := &fakeOwner{}
	o.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var in wire.Announce
		if r.Header.Get(loopback.SecretHeader) != testSecret || json.NewDecoder(r.Body).Decode(&in) != nil {
			w.WriteHeader(401)
			return
		}
		o.announces.Add(1)
		reply := wire.AnnounceReply{OK: true, Echo: in.BootChallenge, Registered: []string{}}
		for _, id := range in.RunnerIDs {
			if strings.Contains(" "+strings.Join(pinned, " ")+" ", " "+id+" ") {
				reply.Registered = append(reply.Registered, id)
			} else {
				reply.Refused = append(reply.Refused, wire.RefusedRunner{RunnerID: id, Why: "not pinned in runners.toml"})
			}
		}
		json.NewEncoder(w).Encode(reply)
	}))
	t.Cleanup(o.Close)
	return o
}

// record writes serve.json naming the owner (this process as its pid).
func (o *fakeOwner) record(t *testing.T, runtimeDir string) {
	t.Helper()
	data, _ := json.Marshal(trayclient.Record{Addr: strings.TrimPrefix(o.URL, "http://"), PID: os.Getpid(), Brain: "shop"})
	if err := os.WriteFile(filepath.Join(runtimeDir, trayclient.RecordFile), data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// logBook collects a daemon's log lines.
type logBook struct {
	mu    sync.Mutex
	lines []string
}

func (l *logBook) logf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, fmt.Sprintf(format, args...))
}

func (l *logBook) count(sub string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, line := range l.lines {
		if strings.Contains(line, sub) {
			n++
		}
	}
	return n
}

// within waits up to d for cond, and says how long it took.
func within(t *testing.T, d time.Duration, what string, cond func() bool) time.Duration {
	t.Helper()
	start := time.Now()
	for !cond() {
		if time.Since(start) > d {
			t.Fatalf("%s: not within %v", what, d)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return time.Since(start)
}

// With the default 30 s interval, runnerd finds an owner that starts
// after it, and one that restarts on another port, within a second or
// two (not at its next interval), says once what it waits for meanwhile,
// and does not announce more than once to an owner that took the
// announce.
func TestAnnounceFindsAnOwnerThatStartsOrRestarts(t *testing.T) {
	r := newRig(t, `true`, `true`, 30)
	logs := &logBook{}
	r.d.Logf, r.d.port, r.d.Announce = logs.logf, "7421", AnnounceInterval
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan struct{})
	go func() { r.d.announceLoop(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	runtime := r.d.Repo.RuntimeDir()

	time.Sleep(1500 * time.Millisecond) // several retries
	if n := logs.count("waiting for the owner: no serve.json yet — start m1nd serve"); n != 1 {
		t.Fatalf("the wait for serve.json logged %d times: %q", n, logs.lines)
	}
	first := newFakeOwner(t, "build-1", "elsewhere")
	first.record(t, runtime)
	took := within(t, 2*time.Second, "announce to an owner that started later", func() bool { return first.announces.Load() > 0 })
	t.Logf("found the owner that started later in %v", took)
	// runnerd logs the refusal once the owner's reply is in: a moment
	// after the owner counted the announce.
	refusal := "the owner at " + first.URL + " refused namer: not pinned in runners.toml"
	within(t, 2*time.Second, "the refusal logged", func() bool { return logs.count(refusal) > 0 })
	if n := logs.count(refusal); n != 1 {
		t.Fatalf("the refusal logged %d times: %q", n, logs.lines)
	}
	time.Sleep(1500 * time.Millisecond)
	if n := first.announces.Load(); n != 1 {
		t.Fatalf("%d announces to an owner that took the first, within 30 s", n)
	}

	// The owner dies (its record stays, as after a kill) and another
	// starts on another port.
	first.Close()
	second := newFakeOwner(t, "build-1", "elsewhere", "namer")
	second.record(t, runtime)
	took = within(t, 2*time.Second, "announce to a restarted owner", func() bool { return second.announces.Load() > 0 })
	t.Logf("found the restarted owner in %v", took)
	announced := "announced [build-1 namer elsewhere] to " + second.URL + "; registered [build-1 namer elsewhere]"
	within(t, 2*time.Second, "the announce logged", func() bool { return logs.count(announced) > 0 })
	if n := logs.count(announced); n != 1 {
		t.Fatalf("the announce to the second owner logged %d times: %q", n, logs.lines)
	}

	// No owner answers at the recorded address: runnerd says so once and
	// keeps trying, sooner than its interval.
	second.Close()
	os.Remove(filepath.Join(runtime, trayclient.RecordFile))
	within(t, 2*time.Second, "the wait logged", func() bool { return logs.count("no serve.json yet") == 2 })
	third := newFakeOwner(t, "build-1")
	third.record(t, runtime)
	within(t, 2*time.Second, "announce to a third owner", func() bool { return third.announces.Load() > 0 })
}

// A runner pinned in runners.toml while runnerd runs is served and
// announced within a second, no restart; a file that does not load keeps
// the runners runnerd had.
func TestAnnounceRereadsRunnersToml(t *testing.T) {
	r := newRig(t, `true`, `true`, 30)
	logs := &logBook{}
	file := filepath.Join(r.d.Repo.RuntimeDir(), runners.ConfigFile)
	pin := func(ids ...string) {
		var b strings.Builder
		for _, id := range ids {
			fmt.Fprintf(&b, "[[runner]]\nid = %q\ncapability = \"build-runner\"\ncommand = [\"true\", \"{packet_file}\"]\ngate_command = \"true\"\nworkspace_allowlist = [%q]\n", id, r.dir)
		}
		if err := os.WriteFile(file, []byte(b.String()), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	pin("build-1")
	cfg, err := runners.LoadConfig(file)
	if err != nil {
		t.Fatal(err)
	}
	owner := newFakeOwner(t, "build-1", "build-2")
	owner.record(t, r.d.Repo.RuntimeDir())
	r.d.Config, r.d.ConfigFile = cfg, file
	r.d.Logf, r.d.port, r.d.Announce = logs.logf, "7421", AnnounceInterval
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { r.d.announceLoop(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	within(t, 2*time.Second, "the first announce", func() bool { return owner.announces.Load() == 1 })

	pin("build-1", "build-2")
	took := within(t, 2*time.Second, "announce after runners.toml changed", func() bool { return owner.announces.Load() == 2 })
	t.Logf("announced build-2 %v after it was pinned", took)
	if r.d.config().Runner("build-2") == nil || logs.count("runners.toml changed; runners now: build-1 (build-runner), build-2 (build-runner)") != 1 {
		t.Fatalf("build-2 is not served: %q", logs.lines)
	}
	if os.WriteFile(file, []byte("[[runner]]\nid = 3\n"), 0o600) != nil {
		t.Fatal("write")
	}
	within(t, 2*time.Second, "the bad file logged", func() bool { return logs.count("runnerd keeps the runners it had until the file loads") == 1 })
	if r.d.config().Runner("build-2") == nil {
		t.Fatal("a bad runners.toml dropped the runners")
	}
}
