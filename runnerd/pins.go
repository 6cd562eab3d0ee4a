package runnerd

import (
	"crypto/ed25519"
	"fmt"

	"github.com/m1nd/m1nd/brain"
	"github.com/m1nd/m1nd/chain"
	"github.com/m1nd/m1nd/internal/secret"
	"github.com/m1nd/m1nd/rules"
	"github.com/m1nd/m1nd/runners"
)

// The gate that proves work is the human's (DESIGN §7, §10). runners.toml
// lies in the runtime folder, which an agent could rewrite, so runnerd
// runs a build runner only as a human approved its pin, by hash, together
// with this runnerd's public key, in refs/m1nd/pins: signed by a passkey,
// or confirmed at a terminal (m1nd runners approve) while the brain has
// none. A pin changed since — a gate an agent rewrote — or a key that is
// not the approved one is refused unpinned_runner and named in the log.
// What the approved gate passed on, runnerd signs (attest): the laws
// take a runner's merge_wait only with that signature.

// approval is the approved pin set under which r's gate may prove work
// here (nil for a runner whose gate proves nothing), or the refusal that
// says why not and what to do.
func (d *Daemon) approval(r *runners.Runner) (*brain.PinSet, error) {
	if !r.ProvesWork() {
		return nil, nil
	}
	if d.Key == nil {
		return nil, rules.Refusef(rules.UnpinnedRunner, "runner_id", "runner %s: runnerd has no signing key (%s), so nothing it gates could be proven: run m1nd init", r.ID, secret.RunnerKeyPath(d.Repo))
	}
	if err := d.flows.CheckSound(d.life, brain.PinsRef); err != nil {
		return nil, err
	}
	approved, err := d.flows.ApprovedPins()
	if err != nil {
		return nil, fmt.Errorf("read the approved runner pins: %w", err)
	}
	key := rules.RunnerKey(d.Key.Public().(ed25519.PublicKey))
	a := approved.Runner(r.ID)
	if a != nil && a.Pin == r.PinHash() && a.Key == key {
		return approved, nil
	}
	what := "has no approved pin yet"
	switch {
	case a != nil && a.Pin != r.PinHash():
		what = "is pinned otherwise than a human approved (its command, gate or workspaces changed)"
	case a != nil:
		what = fmt.Sprintf("was approved with another runnerd's key, not this one's (%s)", rules.RunnerKeyFingerprint(key))
	}
	return nil, rules.Refusef(rules.UnpinnedRunner, "runner_id", "runner %s %s: the gate that proves work is the human's; approve its pin (gate %q, runnerd key %s) in the tray's Runner pins, signed by your passkey, or with m1nd runners approve at a terminal while the brain has no passkey", r.ID, what, rules.Clip(r.GateCommand), rules.RunnerKeyFingerprint(key))
}

// attest signs the gate merge_wait letter l names, as runner's under the
// pin set approved: what the laws take a runner's merge_wait by.
func (d *Daemon) attest(runner *runners.Runner, approved *brain.PinSet, l *chain.Letter) (*rules.Attestation, error) {
	if approved == nil || d.Key == nil {
		return nil, fmt.Errorf("runner %s has no approved pin set to sign under", runner.ID)
	}
	st, err := chain.GateStatementOf(l, l.Canonical(), runner.ID, approved.Version)
	if err != nil {
		return nil, err
	}
	att := rules.SignGate(d.Key, st)
	return &att, nil
}

// noteApprovals logs, for the runners now pinned, each build runner whose
// pin a human has not approved: it will not run until it is.
func (d *Daemon) noteApprovals(cfg *runners.Config) {
	for _, r := range cfg.Runners {
		if _, err := d.approval(r); err != nil {
			if ref, ok := rules.AsRefusal(err); ok {
				d.Logf("%s", ref.Lesson)
			} else {
				d.Logf("runner %s: %v", r.ID, err)
			}
		}
	}
}
