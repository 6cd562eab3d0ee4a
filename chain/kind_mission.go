package chain

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/m1nd/m1nd/gitstore"
	"github.com/m1nd/m1nd/rules"
)

// MissionKind is the mission chain: refs/m1nd/missions/<mission_id>, one
// letter per commit in letter.json, each extending the head it names.
var MissionKind = Define(Spec[*Letter, NamedLetter]{
	Shape: Shape{
		Name:      "mission",
		Prefix:    MissionRefPrefix,
		ValidName: ValidMissionID,
		File:      LetterFile,
		Race:      RaceStale,
	},
	Decode:   decodeStoredLetter,
	Describe: describeLetter,
	Follows:  letterFollows,
})

// describeLetter makes `git log` on a mission ref read well: a subject
// naming the mission, seq, phase and block, and the letter's id.
func describeLetter(n NamedLetter) (string, []Trailer) {
	l := n.Letter
	return fmt.Sprintf("%s #%d %s %s", l.MissionID, l.MissionSeq, l.Phase, l.BlockID), []Trailer{{"M1nd-Letter", n.ID}}
}

// NamedLetter is what names a mission letter's commit (MissionKind's
// Commit.Doc): the letter and its id, which its writer has already
// computed from the canonical bytes it writes.
type NamedLetter struct {
	Letter *Letter
	ID     string // LetterID of the letter's canonical bytes
}

// ReadLetter reads the letter of mission commit c as the laws read every
// stored letter (MissionKind's one file, decoded strictly), with its
// bytes.
func ReadLetter(objs gitstore.Objects, c *gitstore.Commit) ([]byte, *Letter, error) {
	body, err := MissionKind.readFile(objs, c)
	if err != nil {
		return nil, nil, err
	}
	l, err := decodeStoredLetter(body)
	return body, l, err
}

// decodeStoredLetter reads a letter as the laws read a raw commit: it
// decodes strictly, validates, and is its own canonical bytes.
func decodeStoredLetter(body []byte) (*Letter, error) {
	if l, ok := decodeCanonicalLetter(body); ok {
		if err := Validate(l); err != nil {
			return nil, err
		}
		return l, nil
	}
	return decodeStoredLetterStrictly(body)
}

// decodeCanonicalLetter is the fast way in for a stored letter, which must
// be canonical anyway: bytes that are exactly the canonical encoding of
// what they decode to hold no unknown, duplicate or case-variant key and
// nothing else DecodeLetter's key walk looks for (DecodeCanonical), and
// that walk was most of verify's time. Anything else takes the strict
// path, for its precise lesson. FuzzStoredLetterFastPath holds the fast
// path to accepting nothing the strict one refuses.
func decodeCanonicalLetter(body []byte) (*Letter, bool) {
	var l Letter
	if json.Unmarshal(body, &l) != nil || l.Schema != LetterSchema || !bytes.Equal(l.Canonical(), body) {
		return nil, false
	}
	return &l, true
}

// decodeStoredLetterStrictly reads a stored letter key by key.
func decodeStoredLetterStrictly(body []byte) (*Letter, error) {
	l, err := DecodeLetter(body)
	if err == nil {
		err = Validate(l)
	}
	if err == nil { // a letter decodes from any spacing; a stored one is canonical
		err = CheckCanonical(body, l, LetterFile)
	}
	if err != nil {
		return nil, err
	}
	return l, nil
}

// letterFollows is the post law from step 6 on, for a letter written by
// any means (Missions.Post asks it too): it belongs to its ref's mission,
// extends the letter before, follows the board's transitions (landed and
// archived end a mission), a landing is backed by the store, a merge_wait
// gate tested a commit of the mission's own work (where this repository
// has the branch), and an archive is a human gesture over a merge_wait
// head.
func letterFollows(prev, next *Decoded[*Letter], env Env) error {
	l := next.Value
	if id := strings.TrimPrefix(next.Ref, MissionRefPrefix); l.MissionID != id {
		return rules.Refusef(rules.InvalidLetter, "mission_id", "the letter belongs to %s, not %s", rules.Echo(l.MissionID), id)
	}
	var head *Letter
	headID := ""
	if prev != nil {
		head, headID = prev.Value, prev.ID
	}
	if err := CheckExtends(l, head, headID); err != nil {
		return err
	}
	if err := CheckTransition(l, head); err != nil {
		return err
	}
	if err := CheckLanded(l, head, headID, env.Landings); err != nil {
		return err
	}
	if l.Phase == PhaseLanded {
		if err := checkLandedProven(&prev.Doc, &next.Doc, head, env); err != nil {
			return err
		}
	}
	if l.Phase == PhaseMergeWait {
		if err := checkGateProof(&next.Doc, l, env); err != nil {
			return err
		}
	}
	if err := checkTested(l, env.Work); err != nil {
		return err
	}
	if l.Phase == PhaseArchived {
		if !rules.IsHumanOrigin(OriginOf(next.Meta.Message)) {
			return rules.Refusef(rules.HumanGestureRequired, "phase", "an archived letter is a human gesture: its commit carries M1nd-Origin: human-tty (m1nd mission archive at a terminal) or human-passkey (the tray, with its proof)")
		}
		if env.Gestures != nil {
			return env.Gestures.CheckCommit(&next.Doc, rules.GestureArchive, next.Body)
		}
	}
	return nil
}

// TrailerValue returns the value of the first line "key: value" (key in
// any case) of a commit message.
func TrailerValue(message, key string) (string, bool) {
	for _, line := range strings.Split(message, "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.EqualFold(strings.TrimSpace(k), key) {
			return strings.TrimSpace(v), true
		}
	}
	return "", false
}

// checkTested refuses a merge_wait letter whose candidate names a tested
// commit that is not on the mission's work branch, where work is known and
// this repository has that branch.
func checkTested(l *Letter, work WorkGuard) error {
	if work == nil || l.Phase != PhaseMergeWait || l.ReceiptCandidate == nil {
		return nil
	}
	commit, _ := l.ReceiptCandidate.Evidence.Tested()
	if commit == "" {
		return nil
	}
	on, has, err := work.OnWorkBranch(l.MissionID, commit)
	if err != nil {
		return fmt.Errorf("post %s: %w", l.MissionID, err)
	}
	if has && !on {
		return rules.Refusef(rules.IncompleteEvidence, "receipt_candidate.evidence.evidence_refs", "the candidate names %.12s as the commit its gate tested, which is not on m1nd/%s: a gate tests the mission's own work", commit, l.MissionID)
	}
	return nil
}
