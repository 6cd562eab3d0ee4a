package brain

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/m1nd/m1nd/chain"
	"github.com/m1nd/m1nd/gitstore"
	"github.com/m1nd/m1nd/rules"
)

// One brain across clones (seed §1: "the brain's registered display
// name"). A brain's name is registered once, in refs/m1nd/brain, at the
// first init of a repository that has none, and carried by sync like every
// m1nd ref; a clone whose remote holds a registration adopts it at init,
// so two clones in folders of different names are one brain. A rename
// appends to the registration, keeping every earlier name; it is a human
// gesture.

// RegistrationRef is the ref whose commits register the brain's name.
const RegistrationRef = chain.RefRoot + "brain"

// RegistrationFile is the one file in a registration commit's tree.
const RegistrationFile = "brain.json"

// RegistrationSchema names the registration's format.
const RegistrationSchema = "m1nd-brain-v0"

// Registration is the brain's registered name, at one version, with every
// name it was registered under before, oldest first.
type Registration struct {
	Schema  string   `json:"schema"`
	Version int64    `json:"version"`
	Name    string   `json:"name"`
	Names   []string `json:"names"` // every name registered, oldest first; the last is Name
}

// Canonical returns the registration's canonical bytes.
func (g *Registration) Canonical() []byte { return chain.CanonicalJSON(g) }

// RegistrationKind is the brain's registration: one ref, its first commit
// the name, each later one a rename, which is a human gesture.
var RegistrationKind = chain.Define(chain.Spec[*Registration, *Registration]{
	Shape: chain.Shape{
		Name:   "brain",
		Prefix: RegistrationRef,
		Single: true,
		File:   RegistrationFile,
		Race:   chain.RaceStale,
	},
	Decode: DecodeRegistration,
	Describe: func(g *Registration) (string, []chain.Trailer) {
		if len(g.Names) < 2 {
			return "brain: register " + g.Name, nil
		}
		return fmt.Sprintf("brain: rename %s to %s", g.Names[len(g.Names)-2], g.Name), nil
	},
	Follows: registrationFollows,
})

// DecodeRegistration reads a stored registration: its canonical bytes,
// this schema, names that can name a brain, the last one its name.
func DecodeRegistration(body []byte) (*Registration, error) {
	g, err := chain.DecodeAs[Registration](body, RegistrationFile)
	if err != nil {
		return nil, err
	}
	if g.Schema != RegistrationSchema {
		return nil, rules.Refusef(rules.SchemaMismatch, "schema", "%s is not %q", RegistrationFile, RegistrationSchema)
	}
	if len(g.Names) == 0 || g.Names[len(g.Names)-1] != g.Name {
		return nil, rules.Refusef(rules.InvalidLetter, "names", "a registration lists every name the brain was registered under, its name last")
	}
	for _, n := range g.Names {
		if err := checkName(n); err != nil {
			return nil, rules.Refusef(rules.InvalidLetter, "name", "%v", err)
		}
	}
	return g, nil
}

// registrationFollows: the first registration is version 1 with one name;
// each later one adds 1, keeps every earlier name and adds a new one, and
// is a human gesture (the name every letter carries is the human's to
// change).
func registrationFollows(prev, next *chain.Decoded[*Registration], env chain.Env) error {
	g := next.Value
	if prev == nil {
		if g.Version != 1 || len(g.Names) != 1 {
			return rules.Refusef(rules.InvalidLetter, "version", "a brain's first registration is version 1, with its one name")
		}
		return nil
	}
	p := prev.Value
	if g.Version != p.Version+1 || len(g.Names) != len(p.Names)+1 || !slices.Equal(g.Names[:len(p.Names)], p.Names) || slices.Contains(p.Names, g.Name) {
		return rules.Refusef(rules.InvalidLetter, "names", "a rename adds 1 to version and a new name after every earlier one, which stay")
	}
	if !rules.IsHumanOrigin(chain.OriginOf(next.Meta.Message)) {
		return rules.Refusef(rules.HumanGestureRequired, "origin", "renaming a brain is a human gesture: every letter carries its name")
	}
	if env.Gestures == nil {
		return nil
	}
	return env.Gestures.CheckCommit(&next.Doc, rules.GestureRename, next.Body)
}

// PrepareRename prepares the rename of a registered brain to name, to be
// confirmed at a terminal (or signed by a passkey): the registration keeps
// every earlier name, so letters that carry one stay the brain's.
func PrepareRename(repo *gitstore.Repo, name string, now time.Time) (*chain.Prepared, *Registration, error) {
	prev, ok, err := Registered(repo)
	if err != nil {
		return nil, nil, err
	}
	if !ok {
		return nil, nil, rules.Refusef(rules.InvalidTransition, "brain", "this brain has no registration to rename (m1nd init registers one)")
	}
	if err := checkName(name); err != nil {
		return nil, nil, rules.Refusef(rules.InvalidLetter, "name", "%v", err)
	}
	if slices.Contains(prev.Names, name) {
		return nil, nil, rules.Refusef(rules.InvalidTransition, "name", "brain %q was already registered as %q: a rename takes a name it never had", prev.Name, name)
	}
	head, _, err := repo.ReadRef(RegistrationRef)
	if err != nil {
		return nil, nil, err
	}
	next := &Registration{Schema: RegistrationSchema, Version: prev.Version + 1, Name: name, Names: append(slices.Clone(prev.Names), name)}
	body := next.Canonical()
	blob, err := repo.WriteBlob(body)
	if err != nil {
		return nil, nil, err
	}
	tree, err := repo.WriteTree([]gitstore.TreeEntry{{Name: RegistrationFile, Mode: gitstore.ModeFile, Hash: blob}})
	if err != nil {
		return nil, nil, err
	}
	p := &chain.Prepared{
		Chain: chain.Chain{Repo: repo, Kind: RegistrationKind, Ref: RegistrationRef}, Parent: head, Tree: tree, Gesture: rules.GestureRename, Change: body,
		Meta: chain.Commit{Agent: rules.HumanName, When: now.UTC(), Doc: next},
	}
	return p, next, nil
}

// CommitRename writes a prepared rename with its origin and proof, judged
// by the laws; a registration that moved meanwhile is stale_head.
func (s *Store) CommitRename(ctx context.Context, p *chain.Prepared, origin string, proof *rules.Proof) (gitstore.Hash, error) {
	h, err := s.commitGesture(ctx, p, origin, proof)
	if errors.Is(err, chain.ErrLostRace) {
		return gitstore.ZeroHash, rules.Refusef(rules.StaleHead, "", "the brain's registration changed while this rename was being confirmed: look again (m1nd brain show) and rename again")
	}
	return h, err
}

// Registered reads the brain's registration; ok is false when the brain
// has none (a repository made before registrations, or never initialised).
func Registered(repo *gitstore.Repo) (reg *Registration, ok bool, err error) {
	head, found, err := repo.ReadRef(RegistrationRef)
	if err != nil || !found {
		return nil, false, err
	}
	body, _, err := repo.ReadFileAt(head, RegistrationFile)
	if err != nil {
		return nil, false, fmt.Errorf("%s at %s: %w", RegistrationRef, head, err)
	}
	reg, err = DecodeRegistration(body)
	return reg, err == nil, err
}

// registrationDate dates every first registration: the first
// registration of a name is then the same commit in every clone that
// makes one before it syncs, and two clones that registered the same
// name agree; two names fork, and sync keeps the remote's.
func registrationDate() time.Time { return time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC) }

// Register writes the brain's first registration under name, unless it
// has one; it returns the registration the brain holds after, and whether
// this call wrote it.
func Register(ctx context.Context, repo *gitstore.Repo, name string) (*Registration, bool, error) {
	if reg, ok, err := Registered(repo); err != nil || ok {
		return reg, false, err
	}
	if err := checkName(name); err != nil {
		return nil, false, err
	}
	reg := &Registration{Schema: RegistrationSchema, Version: 1, Name: name, Names: []string{name}}
	c := chain.Chain{Repo: repo, Kind: RegistrationKind, Ref: RegistrationRef}
	meta := chain.Commit{Agent: rules.HumanName, When: registrationDate(), Doc: reg}
	if _, err := c.Append(ctx, gitstore.ZeroHash, reg.Canonical(), meta); err != nil {
		if errors.Is(err, chain.ErrLostRace) { // registered meanwhile: that one stands
			reg, _, err := Registered(repo)
			return reg, false, err
		}
		return nil, false, fmt.Errorf("register brain %s: %w", name, err)
	}
	return reg, true, nil
}
