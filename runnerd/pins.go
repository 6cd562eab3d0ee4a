package runnerd

import (
	"fmt"

	"github.com/m1nd/m1nd/brain"
	"github.com/m1nd/m1nd/gates"
)

// The gate that proves work is the human's (DESIGN §7). runners.toml lies
// in the runtime folder, which the agents runnerd spawns can write: so
// once the brain has a passkey, runnerd runs a build runner only as a
// passkey approved its pin, by hash, in refs/m1nd/pins (the laws judge that
// ref like every gesture's). A pin changed since — a gate an agent
// rewrote — is refused unpinned_runner and named in the log. While the
// brain has no passkey, the pins are the operator's file, in the terminal's
// weaker mode; the mission view shows the gate that proved the work either
// way.

// PinRef is the evidence ref a build runner's receipt candidate carries:
// the approved pin whose gate proved the work.
func PinRef(r *Runner) string { return "pin:" + r.PinHash() }

// approval is nil when r's gate may prove work here, and otherwise the
// refusal that says why not and what to do.
func (d *Daemon) approval(r *Runner) error {
	if !r.ProvesWork() {
		return nil
	}
	keys, err := d.store.Keys()
	if err != nil {
		return fmt.Errorf("read the brain's passkeys: %w", err)
	}
	if keys == nil || len(keys.Keys) == 0 {
		return nil
	}
	if err := d.flows.CheckSound(d.life, brain.PinsRef); err != nil {
		return err
	}
	approved, err := brain.ApprovedPins(d.Repo)
	if err != nil {
		return fmt.Errorf("read the approved runner pins: %w", err)
	}
	if approved.Approved(r.ID, r.PinHash()) {
		return nil
	}
	what := "has no approved pin yet"
	if approved.Has(r.ID) {
		what = "is pinned otherwise than a passkey approved (its command, gate or workspaces changed)"
	}
	return gates.Refusef(gates.UnpinnedRunner, "runner_id", "runner %s %s: the gate that proves work is the human's; approve its pin (gate %q) in the tray's Runner pins, signed by your passkey", r.ID, what, gates.Clip(r.GateCommand))
}

// noteApprovals logs, for the runners now pinned, each build runner whose
// pin a passkey has not approved: it will not run until it is.
func (d *Daemon) noteApprovals(cfg *Config) {
	for _, r := range cfg.Runners {
		if err := d.approval(r); err != nil {
			if ref, ok := gates.AsRefusal(err); ok {
				d.Logf("%s", ref.Lesson)
			} else {
				d.Logf("runner %s: %v", r.ID, err)
			}
		}
	}
}
