package trayclient

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/m1nd/m1nd/gitstore"
)

// RecordFile is where a running owner records itself in the runtime dir.
const RecordFile = "serve.json"

// Record is what a running owner writes to RecordFile (0600): how the
// verbs and runnerd that talk to it find it.
type Record struct {
	Addr     string `json:"addr"`
	PID      int    `json:"pid"`
	Brain    string `json:"brain"`
	ReadOnly bool   `json:"read_only"`
}

// ErrRunning is the error Claim answers when another live
// owner's record is in the way.
type ErrRunning struct{ Record Record }

func (e *ErrRunning) Error() string {
	return fmt.Sprintf("an owner already runs for this repository at http://%s/ (pid %d)", e.Record.Addr, e.Record.PID)
}

// Claim records a running owner, unless the record of another
// running owner is there (*ErrRunning, see Record.Running): one owner
// per repository. A record whose process is gone (a killed owner), or
// whose address no longer answers, is taken over. The record is
// created with a link, so two owners starting at once cannot both win.
// The returned func removes the record, but only while it is still this
// owner's: a record another owner wrote since is left alone.
func Claim(runtimeDir string, rec Record) (remove func(), err error) {
	path := filepath.Join(runtimeDir, RecordFile)
	data, _ := json.Marshal(rec)
	tmp := fmt.Sprintf("%s.%d.tmp", path, os.Getpid())
	if err := gitstore.WriteFileAtomic(tmp, data, 0o600); err != nil {
		return nil, err
	}
	defer os.Remove(tmp)
	for try := 0; ; try++ {
		err := os.Link(tmp, path)
		if err == nil {
			break
		}
		if !errors.Is(err, fs.ErrExist) || try == 2 {
			return nil, fmt.Errorf("record the owner in %s: %w", path, err)
		}
		if other, ok := ReadRecord(runtimeDir); ok && other.Running() {
			return nil, &ErrRunning{Record: other}
		}
		os.Remove(path) // a killed owner's record (or one that does not parse)
	}
	return func() {
		if now, err := gitstore.ReadRuntime(path, 64<<10); err == nil && string(now) == string(data) {
			os.Remove(path)
		}
	}, nil
}

// ReadRecord reads the owner's record in runtimeDir; ok is false when
// there is none, or it does not parse.
func ReadRecord(runtimeDir string) (rec Record, ok bool) {
	data, err := gitstore.ReadRuntime(filepath.Join(runtimeDir, RecordFile), 64<<10)
	if err != nil || json.Unmarshal(data, &rec) != nil {
		return Record{}, false
	}
	return rec, true
}

// Live reports whether the process that wrote the record still runs and
// the record names an address.
func (r Record) Live() bool {
	return r.Addr != "" && r.PID > 0 && !gitstore.ProcessGone(r.PID)
}

// Running reports whether the owner the record names still runs: its
// process is alive and its address accepts a connection. The address
// check keeps a pid that the system reused for another process (after a
// reboot, say) from passing for an owner.
func (r Record) Running() bool {
	if !r.Live() {
		return false
	}
	c, err := net.DialTimeout("tcp", r.Addr, 2*time.Second)
	if err != nil {
		return false
	}
	c.Close()
	return true
}

// URL is the owner's base URL.
func (r Record) URL() string { return "http://" + r.Addr }

// Find returns the running owner's URL from its record, or "" when
// there is none, or the process that wrote it is gone (an owner that was
// killed leaves its record behind).
func Find(runtimeDir string) string {
	rec, ok := ReadRecord(runtimeDir)
	if !ok || !rec.Live() {
		return ""
	}
	return rec.URL()
}
