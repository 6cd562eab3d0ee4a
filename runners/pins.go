package runners

import (
	"fmt"
	"strings"

	"github.com/m1nd/m1nd/brain"
	"github.com/m1nd/m1nd/rules"
)

// PinRef is the evidence ref a build runner's receipt candidate carries:
// the approved pin whose gate proved the work.
func PinRef(r *Runner) string { return rules.PinRef + r.PinHash() }

// PinStatus is one build runner of runners.toml as a human approves it:
// its pin, the key of this machine's runnerd, and where the approved set
// stands on them. The tray's Runner pins panel and `m1nd runners` show it.
type PinStatus struct {
	ID          string   `json:"id"`
	GateCommand string   `json:"gate_command"`
	Command     []string `json:"command"`
	Pin         string   `json:"pin"`
	// Key is the public key of this machine's runnerd, which signs what the
	// runner's gate tested; Fingerprint is how a person compares it.
	Key         string `json:"key"`
	Fingerprint string `json:"fingerprint"`
	// State is approved (its pin and key are in the approved set), changed
	// (its id is, with another pin or key) or new.
	State string `json:"state"`
}

// BuildRunners are the runners of cfg whose gates prove work: theirs are
// the pins a human approves.
func BuildRunners(cfg *Config) []*Runner {
	var out []*Runner
	for _, r := range cfg.Runners {
		if r.ProvesWork() {
			out = append(out, r)
		}
	}
	return out
}

// PinStatuses is where each build runner of cfg stands against the
// approved set, with key as this machine's runnerd key.
func PinStatuses(cfg *Config, approved *brain.PinSet, key string) []PinStatus {
	out := []PinStatus{}
	for _, rn := range BuildRunners(cfg) {
		v := PinStatus{ID: rn.ID, GateCommand: rn.GateCommand, Command: rn.Command, Pin: rn.PinHash(), Key: key, State: "new"}
		if key != "" {
			v.Fingerprint = rules.RunnerKeyFingerprint(key)
		}
		switch a := approved.Runner(rn.ID); {
		case a != nil && a.Pin == v.Pin && a.Key == key:
			v.State = "approved"
		case a != nil:
			v.State = "changed"
		}
		out = append(out, v)
	}
	return out
}

// Approvals are the pins a human approves for the build runners of cfg,
// signed by key; binds says, one line each, what the approval binds.
func Approvals(cfg *Config, key string) (approvals []brain.ApprovedRunner, binds []string) {
	for _, rn := range BuildRunners(cfg) {
		approvals = append(approvals, rn.Approval(key))
		binds = append(binds, fmt.Sprintf("runner %s: its gate %q proves its work, signed by runnerd key %s; it runs %s", rn.ID, rules.OneLine(rn.GateCommand), rules.RunnerKeyFingerprint(key), strings.Join(rn.Command, " ")))
	}
	return approvals, binds
}
