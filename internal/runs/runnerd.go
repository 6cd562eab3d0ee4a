package runs

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/m1nd/m1nd/gitstore"
)

// RunnerdFile is where a running runnerd records itself in the runtime
// dir: so that a landing of a claimed gate knows whether an approved
// runner is here to prove it, before it asks.
const RunnerdFile = "runnerd.json"

// RunnerdRecord is what a running runnerd writes to RunnerdFile (0600).
type RunnerdRecord struct {
	PID  int    `json:"pid"`
	Addr string `json:"addr"`
	// Provers are its build runners whose pins, with its key, are the
	// approved ones: the runners whose gates it can sign.
	Provers []string `json:"provers"`
	// Contained says whether the agents and gates it spawns run in a
	// Landlock domain, Containment in one line how (or why not).
	Contained   bool   `json:"contained"`
	Containment string `json:"containment"`
}

// WriteRunnerd records a running runnerd.
func WriteRunnerd(runtimeDir string, rec RunnerdRecord) error {
	data, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	return gitstore.WriteFileAtomic(filepath.Join(runtimeDir, RunnerdFile), data, 0o600)
}

// RemoveRunnerd removes the record of the runnerd whose pid it names.
func RemoveRunnerd(runtimeDir string, pid int) {
	if rec, ok := ReadRunnerd(runtimeDir); ok && rec.PID == pid {
		os.Remove(filepath.Join(runtimeDir, RunnerdFile))
	}
}

// ReadRunnerd reads the record of a runnerd that still runs; ok is false
// when none does.
func ReadRunnerd(runtimeDir string) (rec RunnerdRecord, ok bool) {
	data, err := gitstore.ReadRuntime(filepath.Join(runtimeDir, RunnerdFile), 64<<10)
	if errors.Is(err, fs.ErrNotExist) || err != nil || json.Unmarshal(data, &rec) != nil {
		return RunnerdRecord{}, false
	}
	if rec.PID <= 0 || gitstore.ProcessGone(rec.PID) {
		return RunnerdRecord{}, false
	}
	return rec, true
}

// Proves reports whether the recorded runnerd can sign runner's gate.
func (r RunnerdRecord) Proves(runner string) bool { return slices.Contains(r.Provers, runner) }
