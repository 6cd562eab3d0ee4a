package chain

import (
	"fmt"
	"slices"
	"strings"

	"github.com/m1nd/m1nd/gitstore"
	"github.com/m1nd/m1nd/rules"
)

// The archive: finished missions folded out of the live refs.
//
// A brain keeps one live ref per mission, and every first push, fetch and
// gc pays for each. A mission that landed or was archived never changes
// again, so once it is old enough `m1nd archive fold` folds it into
// refs/m1nd/archive, a chain of fold commits opened by fold 0 (a root that
// folds nothing): each later one's archive.json lists the missions it
// folds (id, head commit, phase, block, last update), and its parents are
// the previous fold followed by those missions' head commits, in the same
// order. Every letter of a folded mission therefore
// stays reachable, byte for byte, with its commit's trailers and proofs:
// git keeps, fetches and pushes it as it kept it before, and the laws judge
// it as they judged it live (laws: each folded chain from its root, the
// landed law against the store, a gesture against the keys). Only then is
// the mission's live ref deleted, a deletion the laws allow for exactly
// that: the archive folds the ref at the value deleted.

// ArchiveRef is the archive's one ref.
const ArchiveRef = RefRoot + "archive"

// ArchiveFile is the one file of a fold commit.
const ArchiveFile = "archive.json"

// ArchiveSchema is the schema of a fold document.
const ArchiveSchema = "m1nd-archive-v0"

// MaxFold is the most missions one fold commit folds (so the most parents
// it has beyond the previous fold).
const MaxFold = 1000

// Folded is one mission in a fold: where its chain ends, and what its head
// letter says, for the views that list it without reading it.
type Folded struct {
	MissionID string `json:"mission_id"`
	Head      string `json:"head"` // the commit of its last letter
	Phase     string `json:"phase"`
	BlockID   string `json:"block_id"`
	UpdatedAt string `json:"updated_at"`
}

// Fold is the document of one fold commit.
type Fold struct {
	Schema string   `json:"schema"`
	Fold   int64    `json:"fold"` // 1 for the first, +1 each
	Folded []Folded `json:"folded"`
}

// Canonical is the fold's canonical bytes.
func (f *Fold) Canonical() []byte { return CanonicalJSON(f) }

// DecodeFold reads a fold document strictly: its schema, a fold number,
// 1 to MaxFold missions ordered by id, each id once, each a finished
// mission (landed or archived) with a commit for its head.
func DecodeFold(body []byte) (*Fold, error) {
	f, err := DecodeAs[Fold](body, ArchiveFile)
	if err != nil {
		return nil, err
	}
	if f.Schema != ArchiveSchema {
		return nil, rules.Refusef(rules.SchemaMismatch, "schema", "%s is not %q", ArchiveFile, ArchiveSchema)
	}
	if f.Fold < 0 {
		return nil, rules.Refusef(rules.InvalidLetter, "fold", "folds are numbered from 0, the archive's opening")
	}
	if f.Fold == 0 && len(f.Folded) > 0 {
		return nil, rules.Refusef(rules.InvalidLetter, "folded", "fold 0 opens the archive and folds nothing")
	}
	if f.Fold > 0 && (len(f.Folded) == 0 || len(f.Folded) > MaxFold) {
		return nil, rules.Refusef(rules.InvalidLetter, "folded", "a fold folds 1 to %d missions, not %d", MaxFold, len(f.Folded))
	}
	for i, m := range f.Folded {
		if !ValidMissionID(m.MissionID) {
			return nil, rules.Refusef(rules.InvalidLetter, "folded", "%q is not a mission id", m.MissionID)
		}
		if i > 0 && f.Folded[i-1].MissionID >= m.MissionID {
			return nil, rules.Refusef(rules.InvalidLetter, "folded", "a fold lists its missions once each, ordered by id (%s after %s)", m.MissionID, f.Folded[i-1].MissionID)
		}
		if _, err := gitstore.ParseHash(m.Head); err != nil {
			return nil, rules.Refusef(rules.InvalidLetter, "folded", "mission %s: head %q is not a commit id", m.MissionID, m.Head)
		}
		if !Finished(m.Phase) {
			return nil, rules.Refusef(rules.InvalidTransition, "folded", "mission %s is %s: only a finished mission (landed or archived) folds", m.MissionID, m.Phase)
		}
	}
	return f, nil
}

// ArchiveKind is the archive's chain. Its commits are the one kind whose
// commits have more than one parent: the previous fold first, then the
// heads of the missions folded.
var ArchiveKind = Define(Spec[*Fold, *Fold]{
	Shape: Shape{
		Name:        "archive",
		Prefix:      ArchiveRef,
		Single:      true,
		File:        ArchiveFile,
		Race:        RaceStale,
		KeepParents: true,
	},
	Decode:   DecodeFold,
	Describe: describeFold,
	Follows:  foldFollows,
})

// describeFold names a fold by its number and how many missions it folds.
func describeFold(f *Fold) (string, []Trailer) {
	if f.Fold == 0 {
		return "archive fold 0: the archive opens", nil
	}
	return fmt.Sprintf("archive fold %d: %s", f.Fold, rules.Count(len(f.Folded), "finished mission")), nil
}

// foldFollows: the archive opens with fold 0, a root commit that folds
// nothing, so that every later fold's first parent is the fold before it;
// folds 1, 2, … have as parents the previous fold and then exactly the
// heads they list, in their order. That every folded chain keeps the mission laws,
// ends at its head's letter as listed and was not folded before is judged
// by the laws, which read objects (laws.Check).
func foldFollows(prev, next *Decoded[*Fold], _ Env) error {
	f := next.Value
	want := int64(0)
	if prev != nil {
		want = prev.Value.Fold + 1
	}
	if f.Fold != want {
		return rules.Refusef(rules.StaleHead, "fold", "this is fold %d; it says %d", want, f.Fold)
	}
	if prev == nil {
		if len(next.Meta.Parents) > 0 {
			return rules.Refusef(rules.InvalidLetter, "fold", "fold 0 opens the archive: a root commit")
		}
		return nil
	}
	parents := next.Meta.Parents[1:]
	heads := make([]gitstore.Hash, len(f.Folded))
	for i, m := range f.Folded {
		heads[i], _ = gitstore.ParseHash(m.Head)
	}
	if !slices.Equal(parents, heads) {
		return rules.Refusef(rules.InvalidLetter, "folded", "a fold commit's parents are the previous fold, then the heads it folds in its order: %d parents for %d missions", len(next.Meta.Parents), len(f.Folded))
	}
	return nil
}

// ArchiveIndex is every mission the archive at head folds, by id (an empty
// index for a zero head). The archive is walked from head along first
// parents, every fold read once.
func ArchiveIndex(objs gitstore.Objects, head gitstore.Hash) (map[string]Folded, error) {
	index := map[string]Folded{}
	err := walkFolds(objs, head, func(f *Fold) bool {
		for _, m := range f.Folded {
			index[m.MissionID] = m // a mission folds once: no later fold names it again
		}
		return true
	})
	return index, err
}

// ArchivedHead is the head commit of mission id as the archive at head
// folds it; ok is false when it folds no such mission. It reads folds,
// newest first, only until the one that names the mission.
func ArchivedHead(objs gitstore.Objects, head gitstore.Hash, id string) (gitstore.Hash, bool, error) {
	var found *Folded
	err := walkFolds(objs, head, func(f *Fold) bool {
		i, ok := slices.BinarySearchFunc(f.Folded, id, func(m Folded, id string) int { return strings.Compare(m.MissionID, id) })
		if ok {
			found = &f.Folded[i]
		}
		return !ok
	})
	if err != nil || found == nil {
		return gitstore.ZeroHash, false, err
	}
	h, err := gitstore.ParseHash(found.Head)
	return h, err == nil, err
}

// walkFolds reads the archive's folds from head along first parents,
// newest first, until fn returns false or the archive's opening.
func walkFolds(objs gitstore.Objects, head gitstore.Hash, fn func(*Fold) bool) error {
	for h := head; !h.IsZero(); {
		c, err := objs.ReadCommit(h)
		if err != nil {
			return fmt.Errorf("%s at %s: %w", ArchiveRef, h, err)
		}
		body, err := objs.ReadFileInTree(c.Tree, ArchiveFile)
		if err != nil {
			return fmt.Errorf("%s at %s: %w", ArchiveRef, h, err)
		}
		f, err := DecodeFold(body)
		if err != nil {
			return fmt.Errorf("%s at %s: %w", ArchiveRef, h, err)
		}
		if !fn(f) || len(c.Parents) == 0 {
			return nil
		}
		h = c.Parents[0]
	}
	return nil
}

// OnChain reports whether h is head or one of its first-parent ancestors:
// a live ref of a folded mission at h is at, or behind, what the archive
// keeps of it.
func OnChain(objs gitstore.Objects, head, h gitstore.Hash) (bool, error) {
	for cur := head; !cur.IsZero(); {
		if cur == h {
			return true, nil
		}
		c, err := objs.ReadCommit(cur)
		if err != nil {
			return false, err
		}
		if len(c.Parents) == 0 {
			return false, nil
		}
		cur = c.Parents[0]
	}
	return false, nil
}

// Final reports whether the mission letter of commit h is final: landed
// or archived, which nothing follows (CheckTransition) and no history may
// drop (a sync refuses a remote chain that forks below one).
func Final(objs gitstore.Objects, h gitstore.Hash) (bool, error) {
	c, err := objs.ReadCommit(h)
	if err != nil {
		return false, err
	}
	body, err := objs.ReadFileInTree(c.Tree, LetterFile)
	if err != nil {
		return false, err
	}
	facts, err := readHeadFacts(body)
	if err != nil {
		return false, fmt.Errorf("letter of %s: %w", h, err)
	}
	return Finished(facts.Phase), nil
}
