package brain

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/m1nd/m1nd/chain"
	"github.com/m1nd/m1nd/gates"
	"github.com/m1nd/m1nd/gitstore"
)

// The gate that proves work is the human's (DESIGN §7). runners.toml sits
// in the runtime folder, where the agents runnerd spawns can write it; so
// once the brain has a passkey, the runner pins whose gates put a mission
// in merge_wait count only as a human approved them: their hashes in
// refs/m1nd/pins, each change a gesture signed by a passkey. runnerd runs
// a build runner only when its pin is approved there, and says so when it
// is not.

// PinsRef is the ref whose commits are the approved runner pins.
const PinsRef = "refs/m1nd/pins"

// PinsFile is the one file in a pins commit's tree.
const PinsFile = "pins.json"

// PinsSchema names the approved pins' format.
const PinsSchema = "m1nd-runner-pins-v0"

// PinSet is the runner pins a human approved, at one version.
type PinSet struct {
	Schema  string           `json:"schema"`
	Version int64            `json:"version"`
	Runners []ApprovedRunner `json:"runners"`
}

// ApprovedRunner is one runner pin as approved: its id, the hash of the
// whole pin (runnerd.PinHash: command, gate, workspaces, setup, timeouts)
// and, for people reading the ref, its gate and command.
type ApprovedRunner struct {
	ID          string   `json:"id"`
	Pin         string   `json:"pin"` // sha256:<64 hex>
	GateCommand string   `json:"gate_command"`
	Command     []string `json:"command"`
}

// Canonical returns the set's canonical bytes: what its proof binds.
func (p *PinSet) Canonical() []byte { return chain.CanonicalJSON(p) }

// Approved reports whether the set approves runner id with pin hash pin.
func (p *PinSet) Approved(id, pin string) bool {
	if p == nil {
		return false
	}
	for _, r := range p.Runners {
		if r.ID == id {
			return r.Pin == pin
		}
	}
	return false
}

// Has reports whether the set names runner id, at any pin.
func (p *PinSet) Has(id string) bool {
	if p == nil {
		return false
	}
	for _, r := range p.Runners {
		if r.ID == id {
			return true
		}
	}
	return false
}

// PinsKind is the approved runner pins: one ref, each commit the whole
// set, each a human gesture (pins) over its canonical bytes.
var PinsKind = &chain.Kind{
	Name:   "pins",
	Prefix: PinsRef,
	Single: true,
	File:   PinsFile,
	Decode: func(body []byte) (any, error) { return DecodePinSet(body) },
	Describe: func(doc any) (string, []chain.Trailer) {
		p := doc.(*PinSet)
		ids := make([]string, len(p.Runners))
		for i, r := range p.Runners {
			ids[i] = r.ID
		}
		return fmt.Sprintf("pins v%d: approve %s", p.Version, strings.Join(ids, ", ")), nil
	},
	Follows: pinsFollow,
	Race:    chain.RaceStale,
}

func init() { chain.Register(PinsKind) }

// DecodePinSet reads a stored pin set: its canonical bytes, this schema,
// each runner id once, each pin a sha256.
func DecodePinSet(body []byte) (*PinSet, error) {
	p, err := chain.DecodeAs[PinSet](body, PinsFile)
	if err != nil {
		return nil, err
	}
	if p.Schema != PinsSchema {
		return nil, gates.Refusef(gates.SchemaMismatch, "schema", "%s is not %q", PinsFile, PinsSchema)
	}
	seen := map[string]bool{}
	for _, r := range p.Runners {
		hash, ok := strings.CutPrefix(r.Pin, "sha256:")
		if !gates.ValidID(r.ID) || seen[r.ID] || !ok || len(hash) != 64 || strings.Trim(hash, "0123456789abcdef") != "" {
			return nil, gates.Refusef(gates.InvalidLetter, "runners", "each approved runner is a runner id, once, with its pin's sha256")
		}
		seen[r.ID] = true
		if gates.HasUnsafeText(r.GateCommand) {
			return nil, gates.Refusef(gates.InvalidLetter, "gate_command", "an approved gate command is one line of plain text")
		}
	}
	return p, nil
}

// pinsFollow: versions count up from 1, and every set is a human gesture
// over its own bytes.
func pinsFollow(prev, next *chain.Judged, env chain.Env) error {
	p := next.Value.(*PinSet)
	want := int64(1)
	if prev != nil {
		want = prev.Value.(*PinSet).Version + 1
	}
	if p.Version != want {
		return gates.Refusef(gates.InvalidLetter, "version", "each approval of the runner pins adds 1 to version: this one says %d, want %d", p.Version, want)
	}
	if !gates.IsHumanOrigin(chain.OriginOf(next.Meta.Message)) {
		return gates.Refusef(gates.HumanGestureRequired, "origin", "approving runner pins is a human gesture: the gate that proves work is the human's, signed in the tray")
	}
	if env.Gestures == nil {
		return nil
	}
	return env.Gestures.CheckCommit(next, gates.GesturePins, next.Body)
}

// ApprovedPins reads the approved runner pins now; nil when none were.
func ApprovedPins(repo *gitstore.Repo) (*PinSet, error) {
	head, ok, err := repo.ReadRef(PinsRef)
	if err != nil || !ok {
		return nil, err
	}
	body, _, err := repo.ReadFileAt(head, PinsFile)
	if err != nil {
		return nil, fmt.Errorf("%s at %s: %w", PinsRef, head, err)
	}
	return DecodePinSet(body)
}

// PreparePins prepares the approval of runners as the new pin set, to be
// signed by a passkey (or confirmed at a terminal while the brain has no
// key).
func PreparePins(repo *gitstore.Repo, runners []ApprovedRunner, now time.Time) (*chain.Prepared, *PinSet, error) {
	head, _, err := repo.ReadRef(PinsRef)
	if err != nil {
		return nil, nil, err
	}
	next := &PinSet{Schema: PinsSchema, Version: 1, Runners: append([]ApprovedRunner{}, runners...)}
	if !head.IsZero() {
		prev, err := ApprovedPins(repo)
		if err != nil {
			return nil, nil, err
		}
		next.Version = prev.Version + 1
	}
	body := next.Canonical()
	if _, err := DecodePinSet(body); err != nil {
		return nil, nil, err
	}
	blob, err := repo.WriteBlob(body)
	if err != nil {
		return nil, nil, err
	}
	tree, err := repo.WriteTree([]gitstore.TreeEntry{{Name: PinsFile, Mode: gitstore.ModeFile, Hash: blob}})
	if err != nil {
		return nil, nil, err
	}
	p := &chain.Prepared{
		Chain: chain.Chain{Repo: repo, Kind: PinsKind, Ref: PinsRef}, Parent: head, Tree: tree, Gesture: gates.GesturePins, Change: body,
		Meta: chain.Commit{Agent: gates.HumanName, When: now.UTC(), Doc: next},
	}
	return p, next, nil
}

// CommitPins writes a prepared approval with its origin and proof, judged
// by the laws as the brain stands now; a set that moved meanwhile is
// stale_head, nothing written.
func (s *Store) CommitPins(ctx context.Context, p *chain.Prepared, origin string, proof *gates.Proof) (gitstore.Hash, error) {
	h, err := s.commitGesture(ctx, p, origin, proof)
	if errors.Is(err, chain.ErrLostRace) {
		return gitstore.ZeroHash, gates.Refusef(gates.StaleHead, "", "the approved runner pins changed while this approval was being signed: look again and approve again")
	}
	return h, err
}
