package runnerd

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/m1nd/m1nd/gitstore"
	"github.com/m1nd/m1nd/internal/trayclient"
	"github.com/m1nd/m1nd/internal/wire"
	"github.com/m1nd/m1nd/runners"
)

// The announce loop's timings: without an owner that takes its announce,
// runnerd tries again after firstRetry, doubling up to the interval; and
// every watchEvery it looks (one read, two stats) at the owner's record
// and the runner files, and announces at once when one changed: a new
// owner, or a runner pinned, is found within a second.
const (
	firstRetry = 250 * time.Millisecond
	watchEvery = 500 * time.Millisecond
)

// config is the runners runnerd serves now.
func (d *Daemon) config() *runners.Config {
	if c := d.cfg.Load(); c != nil {
		return c
	}
	return d.Config
}

// announceLoop tells the owner which runners are alive: every interval
// while the owner takes the announce, sooner while it does not (see
// firstRetry), and at once when serve.json or a runner file changes. An
// owner that echoes the challenge wrong is not trusted again.
func (d *Daemon) announceLoop(ctx context.Context) {
	every := min(watchEvery, d.Announce)
	watch := time.NewTicker(every)
	defer watch.Stop()
	d.cfgStamp, d.pinsStamp = d.stamp(d.ConfigFile), d.stamp(d.pinsFile())
	retry := firstRetry
	for {
		owner := d.ownerRecord() // what this announce finds: a change after it is news
		wait := d.Announce
		if d.announceOnce(ctx) {
			retry = firstRetry
		} else {
			wait, retry = min(retry, d.Announce), min(retry*2, d.Announce)
		}
		due := time.NewTimer(wait)
	waiting:
		for {
			select {
			case <-ctx.Done():
				due.Stop()
				return
			case <-due.C:
				break waiting
			case <-watch.C:
				changed := d.reloadConfig()
				if now := d.stamp(d.pinsFile()); now != d.pinsStamp {
					d.pinsStamp, changed = now, true
				}
				if now := d.ownerRecord(); now != owner {
					owner, changed, retry = now, true, firstRetry
				}
				if changed {
					due.Stop()
					break waiting
				}
			}
		}
	}
}

// ownerRecord is serve.json as it is now ("" when missing). It is watched
// also when --owner-url names the owner: a change there is an owner that
// restarted, which may be the same one.
func (d *Daemon) ownerRecord() string {
	data, _ := gitstore.ReadRuntime(filepath.Join(d.Repo.RuntimeDir(), trayclient.RecordFile), 1<<20)
	return string(data)
}

// pinsFile is the runners.toml the owner reads its pins from.
func (d *Daemon) pinsFile() string { return filepath.Join(d.Repo.RuntimeDir(), runners.ConfigFile) }

// stamp says whether a file changed: its size and mtime ("" for no file
// to watch).
func (d *Daemon) stamp(path string) string {
	if path == "" {
		return ""
	}
	fi, err := os.Stat(path)
	if err != nil {
		return "missing"
	}
	return fmt.Sprintf("%d %d", fi.Size(), fi.ModTime().UnixNano())
}

// reloadConfig reads ConfigFile again when it changed and reports whether
// it did. A file that does not load leaves the runners as they were, and
// the log says why.
func (d *Daemon) reloadConfig() bool {
	now := d.stamp(d.ConfigFile)
	if now == d.cfgStamp {
		return false
	}
	d.cfgStamp = now
	cfg, err := runners.LoadConfig(d.ConfigFile)
	if err != nil {
		d.Logf("%v; runnerd keeps the runners it had until the file loads", err)
		return false
	}
	d.cfg.Store(cfg)
	d.Logf("%s changed; runners now: %s", filepath.Base(d.ConfigFile), runnerList(cfg))
	d.noteApprovals(cfg)
	return true
}

// runnerList names the runners as "build-1 (build-runner), …".
func runnerList(c *runners.Config) string {
	var ids []string
	for _, r := range c.Runners {
		ids = append(ids, r.ID+" ("+r.Capability+")")
	}
	if len(ids) == 0 {
		return "none pinned"
	}
	return strings.Join(ids, ", ")
}

// note logs lines when state differs from the last one noted: the log
// says what runnerd waits for once per change, never at every retry.
func (d *Daemon) note(state string, lines ...string) {
	if state == d.ownerState {
		return
	}
	d.ownerState = state
	for _, l := range lines {
		d.Logf("%s", l)
	}
}

// announceOnce announces the runners to the owner and reports whether an
// owner took the announce (an owner no longer trusted counts as taken:
// there is nothing to retry).
func (d *Daemon) announceOnce(ctx context.Context) bool {
	d.trustMu.Lock()
	refused := d.ownerRefused
	d.trustMu.Unlock()
	if refused {
		return true
	}
	oc := &trayclient.Client{URL: d.OwnerURL}
	if d.OwnerURL == "" {
		rec, ok := trayclient.ReadRecord(d.Repo.RuntimeDir())
		switch {
		case !ok:
			d.note("no record", "waiting for the owner: no serve.json yet — start m1nd serve")
			return false
		case !rec.Live():
			d.note("gone "+rec.URL(), fmt.Sprintf("waiting for the owner: serve.json names an owner at %s whose process (pid %d) is gone — start m1nd serve", rec.URL(), rec.PID))
			return false
		}
		oc.URL = rec.URL()
	}
	oc.Secret, oc.Timeout = d.Secret, 5*time.Second
	var challenge [8]byte
	rand.Read(challenge[:])
	var ids []string
	for _, rn := range d.config().Runners {
		ids = append(ids, rn.ID)
	}
	reply, err := oc.Announce(ctx, wire.Announce{RunnerIDs: ids, Port: d.port, BootChallenge: hex.EncodeToString(challenge[:])})
	var status *trayclient.StatusError
	switch {
	case errors.As(err, &status) && status.Status == http.StatusUnauthorized:
		d.note("401 "+oc.URL, fmt.Sprintf("waiting for the owner: the owner at %s refused runnerd's secret (401): both must read this repository's .git/m1nd/runnerd.secret; restart m1nd serve if m1nd init made it after the owner started", oc.URL))
		return false
	case err != nil:
		d.note("error "+oc.URL, fmt.Sprintf("waiting for the owner: %v — trying again", err))
		return false
	}
	if reply.Echo != hex.EncodeToString(challenge[:]) {
		d.trustMu.Lock()
		d.ownerRefused = true
		d.trustMu.Unlock()
		d.Logf("the owner at %s echoed a wrong challenge: runnerd no longer trusts it", oc.URL)
		return true
	}
	lines := []string{fmt.Sprintf("announced %v to %s; registered %v", ids, oc.URL, reply.Registered)}
	for _, r := range reply.Refused {
		lines = append(lines, fmt.Sprintf("the owner at %s refused %s: %s", oc.URL, r.RunnerID, r.Why))
	}
	d.note(fmt.Sprint("ok ", oc.URL, ids, reply.Registered, reply.Refused), lines...)
	return true
}
