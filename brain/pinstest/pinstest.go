// Package pinstest is a runnerd's signing key for tests: it approves a
// runner's pin with its key in a real brain's refs/m1nd/pins, as a human
// does (at a terminal before the first passkey, or signed by a passkey),
// and signs merge_wait letters as runnerd does, so the laws' gate proofs
// are tested against real signatures and real approvals.
package pinstest

import (
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"testing"
	"time"

	"github.com/m1nd/m1nd/brain"
	"github.com/m1nd/m1nd/chain"
	"github.com/m1nd/m1nd/gitstore"
	"github.com/m1nd/m1nd/rules"
	"github.com/m1nd/m1nd/rules/rulestest"
)

// Runner is one approved runner and the runnerd key that signs for it.
type Runner struct {
	ID      string
	Gate    string // its approved gate command
	Pin     string // sha256:<64 hex>
	Key     ed25519.PrivateKey
	Version int64 // the pin set version that approved it
}

// Approve approves runner id, whose gate is gate, with a fresh runnerd
// key, as the next version of repo's pins (keeping the runners approved
// before): confirmed at a terminal, or signed by auth's passkey when one
// is given.
func Approve(t testing.TB, repo *gitstore.Repo, id, gate string, auth ...*rulestest.Authenticator) *Runner {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(id + "\x00" + gate))
	r := &Runner{ID: id, Gate: gate, Pin: "sha256:" + hex.EncodeToString(sum[:]), Key: priv}
	approvals := []brain.ApprovedRunner{{ID: id, Pin: r.Pin, Key: r.PublicKey(), GateCommand: gate, Command: []string{"agent", "{packet_file}"}}}
	if before, err := brain.ApprovedPins(repo); err != nil {
		t.Fatal(err)
	} else if before != nil {
		for _, a := range before.Runners {
			if a.ID != id {
				approvals = append(approvals, a)
			}
		}
	}
	slices.SortFunc(approvals, func(a, b brain.ApprovedRunner) int {
		if a.ID < b.ID {
			return -1
		}
		return 1
	})
	ctx := context.Background()
	p, set, err := brain.PreparePins(ctx, repo, approvals, time.Now().UTC().Truncate(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	origin, proof := rules.OriginHumanTTY, (*rules.Proof)(nil)
	if len(auth) > 0 {
		origin, proof = rules.OriginHumanPasskey, auth[0].Assert(p.Challenge(), nil)
	}
	if _, err := (&brain.Store{Repo: repo}).CommitPins(ctx, p, origin, proof); err != nil {
		t.Fatalf("approve runner %s: %v", id, err)
	}
	r.Version = set.Version
	return r
}

// PublicKey is the runner's key as the pins carry it.
func (r *Runner) PublicKey() string { return rules.RunnerKey(r.Key.Public().(ed25519.PublicKey)) }

// Sign makes l the runner's merge_wait and signs it, as runnerd does: it
// names the runner (runner_id) and its approved pin and gate, and the
// attestation it returns goes with the post.
func (r *Runner) Sign(t testing.TB, l *chain.Letter) *rules.Attestation {
	t.Helper()
	l.RunnerID = &r.ID
	if l.Gate != nil {
		l.Gate.Command = r.Gate
	}
	if c := l.ReceiptCandidate; c != nil {
		if c.Emitter != nil && c.Emitter.Kind == "runnerd" {
			c.Emitter.ID = r.ID
		}
		if c.Evidence.Command != "" {
			c.Evidence.Command = r.Gate
		}
		if c.Evidence.PinOf() == "" {
			c.Evidence.EvidenceRefs = append(c.Evidence.EvidenceRefs, rules.PinRef+r.Pin)
		}
	}
	st, err := chain.GateStatementOf(l, l.Canonical(), r.ID, r.Version)
	if err != nil {
		t.Fatalf("sign as runner %s: %v", r.ID, err)
	}
	att := rules.SignGate(r.Key, st)
	return &att
}
