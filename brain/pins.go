package brain

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/m1nd/m1nd/chain"
	"github.com/m1nd/m1nd/gitstore"
	"github.com/m1nd/m1nd/rules"
)

// The gate that proves work is the human's (DESIGN §7). runners.toml sits
// in the runtime folder, where the agents runnerd spawns can write it; so
// once the brain has a passkey, the runner pins whose gates put a mission
// in merge_wait count only as a human approved them: their hashes in
// refs/m1nd/pins, each change a gesture signed by a passkey. runnerd runs
// a build runner only when its pin is approved there, and says so when it
// is not.

// PinsRef is the ref whose commits are the approved runner pins.
const PinsRef = chain.RefRoot + "pins"

// PinsFile is the one file in a pins commit's tree.
const PinsFile = "pins.json"

// PinsSchema names the approved pins' format.
const PinsSchema = "m1nd-runner-pins-v0"

// PinSet is the runner pins a human approved, at one version, and what
// the laws need to judge runners' signatures made before the set changed,
// without a clock:
//
//   - Runners: each approved runner, with the public key of the runnerd
//     that signs what its gate tested (Key).
//   - Retired keeps every runner key that left the set (its runner dropped
//     or given another key), with the anchors of the missions whose gates
//     it signed while it was approved: its signature stands only at or
//     below them, so a retired key proves nothing made after.
//   - BeforeKeys anchors the runner merge_waits written before runners
//     signed their gates (written by the first set that approves a key,
//     carried unchanged): such a merge_wait stands, unsigned, only there.
type PinSet struct {
	Schema     string           `json:"schema"`
	Version    int64            `json:"version"`
	Runners    []ApprovedRunner `json:"runners"`
	Retired    []RetiredKey     `json:"retired,omitempty"`
	BeforeKeys Anchors          `json:"before_keys,omitempty"`
}

// ApprovedRunner is one runner pin as approved: its id, the hash of the
// whole pin (runnerd.PinHash: command, gate, workspaces, setup, timeouts),
// the key of the runnerd whose signature proves its gate (rules.RunnerKey;
// absent in sets approved before runners signed) and, for people reading
// the ref, its gate and command.
type ApprovedRunner struct {
	ID          string   `json:"id"`
	Pin         string   `json:"pin"` // sha256:<64 hex>
	Key         string   `json:"key,omitempty"`
	GateCommand string   `json:"gate_command"`
	Command     []string `json:"command"`
}

// RetiredKey is a runner key the set approved once for a runner: what it
// signed for that runner while approved stands (Anchors), nothing it signs
// for it now does. A retired key never comes back to its runner (one
// runnerd's key signs for every runner it runs, so others may keep it).
type RetiredKey struct {
	Runner    string  `json:"runner"`
	Key       string  `json:"key"`
	RetiredIn int64   `json:"retired_in"` // the pin set version that retired it
	Anchors   Anchors `json:"anchors,omitempty"`
}

// Canonical returns the set's canonical bytes: what its proof binds.
func (p *PinSet) Canonical() []byte { return chain.CanonicalJSON(p) }

// Runner returns the approved pin of runner id, nil when the set has none.
func (p *PinSet) Runner(id string) *ApprovedRunner {
	if p == nil {
		return nil
	}
	for i := range p.Runners {
		if p.Runners[i].ID == id {
			return &p.Runners[i]
		}
	}
	return nil
}

// Approved reports whether the set approves runner id with pin hash pin.
func (p *PinSet) Approved(id, pin string) bool {
	r := p.Runner(id)
	return r != nil && r.Pin == pin
}

// Has reports whether the set names runner id, at any pin.
func (p *PinSet) Has(id string) bool { return p.Runner(id) != nil }

// RetiredKey returns the record of runner key key, retired from runner,
// nil when the set never retired it.
func (p *PinSet) RetiredKey(runner, key string) *RetiredKey {
	if p == nil {
		return nil
	}
	for i := range p.Retired {
		if p.Retired[i].Runner == runner && p.Retired[i].Key == key {
			return &p.Retired[i]
		}
	}
	return nil
}

// signs reports whether any approved runner carries a key: runners sign
// their gates from this set on.
func (p *PinSet) signs() bool {
	if p == nil {
		return false
	}
	for _, r := range p.Runners {
		if r.Key != "" {
			return true
		}
	}
	return len(p.Retired) > 0
}

// PinsKind is the approved runner pins: one ref, each commit the whole
// set, each a human gesture (pins) over its canonical bytes.
var PinsKind = chain.Define(chain.Spec[*PinSet, *PinSet]{
	Shape: chain.Shape{
		Name:   "pins",
		Prefix: PinsRef,
		Single: true,
		File:   PinsFile,
		Race:   chain.RaceStale,
	},
	Decode: DecodePinSet,
	Describe: func(p *PinSet) (string, []chain.Trailer) {
		ids := make([]string, len(p.Runners))
		for i, r := range p.Runners {
			ids[i] = r.ID
		}
		return fmt.Sprintf("pins v%d: approve %s", p.Version, strings.Join(ids, ", ")), nil
	},
	Follows: pinsFollow,
})

// DecodePinSet reads a stored pin set: its canonical bytes, this schema,
// each runner id once, each pin a sha256, each key a runner key, each
// retired key on record with the version that retired it.
func DecodePinSet(body []byte) (*PinSet, error) {
	p, err := chain.DecodeAs[PinSet](body, PinsFile)
	if err != nil {
		return nil, err
	}
	if p.Schema != PinsSchema {
		return nil, rules.Refusef(rules.SchemaMismatch, "schema", "%s is not %q", PinsFile, PinsSchema)
	}
	seen := map[string]bool{}
	for _, r := range p.Runners {
		hash, ok := strings.CutPrefix(r.Pin, "sha256:")
		if !rules.ValidID(r.ID) || seen[r.ID] || !ok || len(hash) != 64 || strings.Trim(hash, "0123456789abcdef") != "" {
			return nil, rules.Refusef(rules.InvalidLetter, "runners", "each approved runner is a runner id, once, with its pin's sha256")
		}
		seen[r.ID] = true
		if rules.HasUnsafeText(r.GateCommand) {
			return nil, rules.Refusef(rules.InvalidLetter, "gate_command", "an approved gate command is one line of plain text")
		}
		if r.Key != "" {
			if _, err := rules.ParseRunnerKey(r.Key); err != nil {
				return nil, err
			}
		}
	}
	for _, r := range p.Retired {
		if _, err := rules.ParseRunnerKey(r.Key); err != nil || !rules.ValidID(r.Runner) || r.RetiredIn < 2 || r.RetiredIn > p.Version {
			return nil, rules.Refusef(rules.InvalidLetter, "retired", "a retired runner key names its runner, the key and the pin set version that retired it")
		}
		if err := r.Anchors.check(); err != nil {
			return nil, err
		}
	}
	if err := p.BeforeKeys.check(); err != nil {
		return nil, err
	}
	return p, nil
}

// pinsFollow: versions count up from 1, every set is a human gesture over
// its own bytes, and the keys' record only grows (PinsFollow).
func pinsFollow(prev, next *chain.Decoded[*PinSet], env chain.Env) error {
	p := next.Value
	var before *PinSet
	if prev != nil {
		before = prev.Value
	}
	if err := PinsFollow(before, p); err != nil {
		return err
	}
	if !rules.IsHumanOrigin(chain.OriginOf(next.Meta.Message)) {
		return rules.Refusef(rules.HumanGestureRequired, "origin", "approving runner pins is a human gesture: the gate that proves work is the human's, signed in the tray with a passkey, or confirmed at a terminal (m1nd runners approve) while the brain has none")
	}
	if env.Gestures == nil {
		return nil
	}
	return env.Gestures.CheckCommit(&next.Doc, rules.GesturePins, next.Body)
}

// PinsFollow is the law of a pin set after before (nil: the first): its
// version adds 1; the retired keys before stay on record as they were; a
// key leaves a runner only into Retired, at this version, and a retired
// key never comes back; BeforeKeys is written once, by the first set that
// signs, and never changes.
func PinsFollow(before, next *PinSet) error {
	want := int64(1)
	if before != nil {
		want = before.Version + 1
	}
	if next.Version != want {
		return rules.Refusef(rules.InvalidLetter, "version", "each approval of the runner pins adds 1 to version: this one says %d, want %d", next.Version, want)
	}
	if before == nil {
		before = &PinSet{}
	}
	if lesson := pinKeysFollow(before, next); lesson != "" {
		return rules.Refusef(rules.InvalidLetter, "pins", "%s", lesson)
	}
	return nil
}

// pinKeysFollow is the law of the runner keys' record from before to
// next: the lesson of the first rule broken, "" when it holds.
func pinKeysFollow(before, next *PinSet) string {
	switch shrunk, changed := keptAsWritten(before.Retired, next.Retired); {
	case shrunk:
		return "a retired runner key stays on record: what it signed while approved is judged by it"
	case changed:
		return "a retired runner key stays on record as it was retired"
	}
	for _, r := range next.Retired[len(before.Retired):] {
		if a := before.Runner(r.Runner); a == nil || a.Key != r.Key || r.RetiredIn != next.Version {
			return "a runner key is retired from the runner that held it, at the version that retires it"
		}
	}
	for _, r := range before.Runners {
		if r.Key == "" {
			continue
		}
		kept := next.Runner(r.ID) != nil && next.Runner(r.ID).Key == r.Key
		if !kept && next.RetiredKey(r.ID, r.Key) == nil {
			return fmt.Sprintf("runner %s's key leaves the set only as a retired key, kept on record", r.ID)
		}
	}
	for _, r := range next.Runners {
		if r.Key != "" && next.RetiredKey(r.ID, r.Key) != nil {
			return fmt.Sprintf("runner %s's key was retired from it: a retired key never comes back to its runner; start runnerd with a new key", r.ID)
		}
	}
	if before.signs() && !bytes.Equal(chain.CanonicalJSON(before.BeforeKeys), chain.CanonicalJSON(next.BeforeKeys)) {
		return "before_keys is written by the first set that approves a runner key and never changes"
	}
	return ""
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
// key). A runner key that leaves the set is retired with the anchors of
// the missions it signed; the first set that approves a key anchors the
// runner merge_waits written before runners signed. Either reads every
// mission chain once (ctx bounds it).
func PreparePins(ctx context.Context, repo *gitstore.Repo, runners []ApprovedRunner, now time.Time) (*chain.Prepared, *PinSet, error) {
	head, _, err := repo.ReadRef(PinsRef)
	if err != nil {
		return nil, nil, err
	}
	var prev *PinSet
	next := &PinSet{Schema: PinsSchema, Version: 1, Runners: append([]ApprovedRunner{}, runners...)}
	if !head.IsZero() {
		if prev, err = ApprovedPins(repo); err != nil {
			return nil, nil, err
		}
		next.Version = prev.Version + 1
		next.Retired = append([]RetiredKey(nil), prev.Retired...)
		next.BeforeKeys = prev.BeforeKeys
	}
	if err := next.record(ctx, repo, prev); err != nil {
		return nil, nil, err
	}
	if err := PinsFollow(prev, next); err != nil {
		return nil, nil, err
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
		Chain: chain.Chain{Repo: repo, Kind: PinsKind, Ref: PinsRef}, Parent: head, Tree: tree, Gesture: rules.GesturePins, Change: body,
		Meta: chain.Commit{Agent: rules.HumanName, When: now.UTC(), Doc: next},
	}
	return p, next, nil
}

// record writes into next what the laws need of prev's keys: each key
// that leaves, retired with the anchors of the missions it signed, and,
// when next is the first set to approve a key, the anchors of the runner
// merge_waits written unsigned before.
func (next *PinSet) record(ctx context.Context, repo *gitstore.Repo, prev *PinSet) error {
	var leaving []RetiredKey
	if prev != nil {
		for _, r := range prev.Runners {
			if kept := next.Runner(r.ID); r.Key != "" && (kept == nil || kept.Key != r.Key) {
				leaving = append(leaving, RetiredKey{Runner: r.ID, Key: r.Key, RetiredIn: next.Version})
			}
		}
	}
	first := !prev.signs() && next.signs()
	if len(leaving) == 0 && !first {
		return nil
	}
	signers, err := scanGateSigners(ctx, repo)
	if err != nil {
		return fmt.Errorf("read what runners signed: %w", err)
	}
	for _, r := range leaving {
		r.Anchors = signers.anchorsOf(r.Runner + " " + r.Key)
		next.Retired = append(next.Retired, r)
	}
	if first {
		next.BeforeKeys = signers.anchorsOf("")
	}
	return nil
}

// CommitPins writes a prepared approval with its origin and proof, judged
// by the laws as the brain stands now; a set that moved meanwhile is
// stale_head, nothing written.
func (s *Store) CommitPins(ctx context.Context, p *chain.Prepared, origin string, proof *rules.Proof) (gitstore.Hash, error) {
	h, err := s.commitGesture(ctx, p, origin, proof)
	if errors.Is(err, chain.ErrLostRace) {
		return gitstore.ZeroHash, rules.Refusef(rules.StaleHead, "", "the approved runner pins changed while this approval was being signed: look again and approve again")
	}
	return h, err
}
