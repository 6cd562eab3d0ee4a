package chain

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/m1nd/m1nd/gitstore"
	"github.com/m1nd/m1nd/rules"
)

// BlockGuard is what the post law asks the brain store. Step 3: when the
// brain has a store, the letter's block must exist (the skeleton id is a
// valid anchor) and a receipt candidate must be scoped to its block's
// current boundary; synthetic letters never reach it. And the landed law:
// a landed letter's receipt is a foreign key into the store (Landings).
type BlockGuard interface {
	CheckLetterBlock(blockID string, candidate *ReceiptCandidate) error
	Landings
	// Gestures is the one rule a human gesture meets, before it is written
	// and whenever its commit is judged.
	Gestures
}

// Landings answers the landed law's foreign key: the store at the version
// a landed letter names holds the import made for that mission (DESIGN
// §7). The brain store implements it.
type Landings interface {
	CheckLanding(claim LandingClaim) error
}

// LandingClaim is what a landed letter says of the import that lands it.
type LandingClaim struct {
	MissionID    string
	LetterID     string // the merge_wait letter it lands: the landed letter's prev_letter_id
	BlockID      string
	StoreVersion int64             // the import's store version (receipt.store_version)
	Candidate    *ReceiptCandidate // the merge_wait letter's candidate
}

// WorkGuard is what the post law asks of the repository's branches: where
// the repository has the mission's work branch, the commit a merge_wait
// candidate names as tested must be on it (the gate binds a commit of the
// mission's work, DESIGN §10).
type WorkGuard interface {
	// OnWorkBranch reports whether commit is on missionID's work branch
	// (its tip or a first-parent ancestor); has is false when the
	// repository has no such branch (a mission carried by hand, a remote).
	OnWorkBranch(missionID, commit string) (on, has bool, err error)
}

// Missions posts and reads the mission chains of one brain.
type Missions struct {
	Repo   *gitstore.Repo
	Brain  string     // this brain's display name; letters must name it
	Blocks BlockGuard // optional, see BlockGuard
	Work   WorkGuard  // optional, see WorkGuard
	// Gates judges a merge_wait's gate against the approved runner pins;
	// nil refuses every merge_wait that names a runner.
	Gates GateProofs
}

// PostRequest is one letter submitted for posting.
type PostRequest struct {
	Body   []byte       // the letter JSON as submitted
	Agent  string       // who posts; becomes the commit author
	Origin string       // the human gesture's origin, if any (archived_via)
	Proof  *rules.Proof // with origin human-passkey: the assertion over the letter's canonical bytes
	// Attestation is runnerd's signature over the gate of the merge_wait it
	// posts (rules.GateStatement); nil from anyone else.
	Attestation *rules.Attestation
}

// PostResult is the reply to a successful post.
type PostResult struct {
	// ID is the mission's id again, under the key every reply names its
	// object by (docs/commands.md, "JSON replies").
	ID         string `json:"id"`
	MissionID  string `json:"mission_id"`
	LetterID   string `json:"letter_id"`
	MissionSeq int64  `json:"mission_seq"`
	Phase      string `json:"phase"`
	Deduped    bool   `json:"deduped"`
	Ref        string `json:"ref"`
	Commit     string `json:"commit"`
}

// Head is a mission's current letter.
type Head struct {
	// ID is the mission's id again, under the key every reply names its
	// object by (docs/commands.md, "JSON replies").
	ID              string          `json:"id"`
	MissionID       string          `json:"mission_id"`
	HeadLetterID    string          `json:"head_letter_id"`
	Head            json.RawMessage `json:"head"`
	SupersededCount int64           `json:"superseded_count"`

	// Fault is set when the head's chain breaks the laws (written past the
	// hooks): the views mark it, and nothing proceeds on it.
	Fault *HeadFault `json:"fault,omitempty"`

	// Folded is set when the mission's chain is read from the archive
	// (refs/m1nd/archive): finished, it has no live ref.
	Folded bool `json:"folded,omitempty"`

	Phase  string        `json:"-"` // the head letter's phase
	Letter *Letter       `json:"-"` // nil in a view from HeadsRaw
	Commit gitstore.Hash `json:"-"`
}

// HeadFault is the law a head's chain breaks, and at which commit.
type HeadFault struct {
	Commit  string `json:"commit,omitempty"`
	Refused string `json:"refused"`
	Lesson  string `json:"lesson"`
}

// admit is what Post checks of a letter before it reads the head (steps
// 1 to 4): the human gate on archive, the writer, the brain guard, the
// block guard and validation.
func (m *Missions) admit(req PostRequest) (*Letter, error) {
	// 1. The origin check comes before the input is parsed: only the phase is peeked.
	var peek struct {
		Phase string `json:"phase"`
	}
	if json.Unmarshal(req.Body, &peek) == nil && peek.Phase == PhaseArchived {
		if err := rules.RequireHumanOrigin(req.Origin, "archived_via"); err != nil {
			return nil, err
		}
	}
	if _, err := AgentRefName(req.Agent); err != nil {
		return nil, fmt.Errorf("post: %w", err)
	}
	l, err := DecodeLetter(req.Body)
	if err != nil {
		return nil, err
	}
	if err := missingFields(l); err != nil {
		return nil, err
	}
	// 2. The brain guard. (The peek above matches keys case-insensitively,
	// and DecodeLetter refuses case variants and duplicates, so no archived
	// letter gets this far without the origin check.)
	if l.BrainRef != m.Brain {
		return nil, rules.Refusef(rules.BrainMismatch, "brain_ref", "the letter names brain %q but this is brain %q", rules.Clip(l.BrainRef), m.Brain)
	}
	// 3. The block guard, when the brain has a store.
	if !l.Synthetic && m.Blocks != nil {
		if err := m.Blocks.CheckLetterBlock(l.BlockID, l.ReceiptCandidate); err != nil {
			return nil, err
		}
	}
	// 4. Validation.
	if err := Validate(l); err != nil {
		return nil, err
	}
	return l, nil
}

// Post runs the post law in order (DESIGN §4). What only a post can
// check, and must before the head is read, is here: the human gate on
// archive (before parsing), the brain guard, the block guard, validation
// and dedup of an identical replay. The rest — the head CAS, the board's
// transitions, the landed law, the tested commit, the archive's proof — is
// the mission kind's Follows, the one rule the git hooks, a remote, sync
// and verify judge a letter's commit by. A refusal is a *rules.Refusal and
// nothing has been written.
func (m *Missions) Post(ctx context.Context, req PostRequest) (*PostResult, error) {
	l, err := m.admit(req)
	if err != nil {
		return nil, err
	}
	canonical := l.Canonical()
	id := LetterID(canonical)
	ref, _ := MissionRef(l.MissionID) // valid: checked by Validate
	c := Chain{Repo: m.Repo, Kind: MissionKind, Ref: ref}
	head, hasHead, err := c.Head()
	if err != nil {
		return nil, fmt.Errorf("post %s: %w", l.MissionID, err)
	}
	result := &PostResult{ID: l.MissionID, MissionID: l.MissionID, LetterID: id, MissionSeq: l.MissionSeq, Phase: l.Phase, Ref: ref}
	var prev *Judged
	if hasHead {
		headLetter, err := decodeStored(head.Body)
		if err != nil {
			return nil, fmt.Errorf("post %s: head %s: %w", l.MissionID, head.Commit, err)
		}
		prev = &Judged{Doc: head, Value: headLetter}
		// 5. An identical replay is already in the chain at its own seq.
		if dup, err := m.findLetter(c, head, headLetter, l.MissionSeq, id); err != nil {
			return nil, fmt.Errorf("post %s: %w", l.MissionID, err)
		} else if !dup.IsZero() {
			result.Deduped, result.Commit = true, dup.String()
			return result, nil
		}
	}
	// 6 and 7, and every law of a letter's commit: the kind's own rules,
	// the same the git hooks, a remote and verify judge it by, over the
	// commit about to be written (its trailers say the origin and proof).
	when, _ := time.Parse(time.RFC3339, l.UpdatedAt)
	meta := letterCommit(l, id, req, when)
	next := &Judged{Doc: Doc{Ref: ref, Meta: &gitstore.Commit{Message: MissionKind.Message(meta)}, Body: canonical, ID: id}, Value: l}
	if err := MissionKind.follows(prev, next, m.env()); err != nil {
		return nil, err
	}
	commit, err := c.Append(ctx, head.Commit, canonical, meta)
	if errors.Is(err, ErrLostRace) {
		return nil, rules.Refusef(rules.StaleHead, "prev_letter_id", "another letter was appended to %s while this one was being written; read the head again and extend it", l.MissionID)
	}
	if err != nil {
		return nil, fmt.Errorf("post %s: %w", l.MissionID, err)
	}
	result.Commit = commit.String()
	return result, nil
}

// env is what a letter posted here is judged with: the store's landings
// and gestures, and this repository's work branches. A brain with no store
// has no keys to read, so only a terminal's gesture stands there.
func (m *Missions) env() Env {
	env := Env{Gestures: terminalOnly{}, Work: m.Work, Gates: m.Gates}
	if m.Blocks != nil {
		env.Landings, env.Gestures = m.Blocks, m.Blocks
	}
	return env
}

// terminalOnly judges gestures where no brain store can be read: a
// terminal's confirmation needs no key; a passkey's proof cannot be
// checked.
type terminalOnly struct{}

func (terminalOnly) CheckCommit(doc *Doc, gesture string, change []byte) error {
	if OriginOf(doc.Meta.Message) != rules.OriginHumanTTY {
		return rules.Refusef(rules.HumanGestureRequired, "proof", "this brain's passkeys cannot be read here: %s at a terminal", gesture)
	}
	return nil
}

// CheckExtends is post step 6, the head CAS as the letter states it: on a
// mission with no letters (head nil) the letter is mission_seq 1 with no
// prev_letter_id; else it is the head's seq + 1 and names headID, the head's
// letter id. The git hooks hold letters written by plain git to the same law.
func CheckExtends(l, head *Letter, headID string) error {
	if head == nil {
		if l.MissionSeq != 1 {
			return rules.Refusef(rules.StaleHead, "mission_seq", "mission %s has no letters yet; the first letter is mission_seq 1", l.MissionID)
		}
		if l.PrevLetterID != nil {
			return rules.Refusef(rules.StaleHead, "prev_letter_id", "mission %s has no letters yet; the first letter has no prev_letter_id", l.MissionID)
		}
		return nil
	}
	if l.MissionSeq != head.MissionSeq+1 {
		return rules.Refusef(rules.StaleHead, "mission_seq", "the head of %s is seq %d (letter %s); the next letter is mission_seq %d", l.MissionID, head.MissionSeq, headID, head.MissionSeq+1)
	}
	if l.PrevLetterID == nil || *l.PrevLetterID != headID {
		return rules.Refusef(rules.StaleHead, "prev_letter_id", "the head of %s is letter %s; set prev_letter_id to it", l.MissionID, headID)
	}
	return nil
}

// CheckTransition is post step 7, the board's transition rules: landed
// and archived are terminal, nothing follows them (seed §1h: un-archive is
// out of v1); an archived letter only supersedes a merge_wait head (head
// nil: the mission has no letters); work (judging, executing, gate)
// returns to a mission waiting in merge_wait only through a review letter
// that requests changes (verdict CHANGE), the record of why it returns
// (DESIGN §10). The git hooks apply it to raw writes too.
func CheckTransition(l, head *Letter) error {
	if head != nil && Finished(head.Phase) {
		return rules.Refusef(rules.InvalidTransition, "phase", "%s is %s: landed and archived are terminal, nothing follows them (open a new mission for more work)", l.MissionID, head.Phase)
	}
	if head != nil && returnsToWork(l.Phase) {
		switch {
		case head.Phase == PhaseMergeWait:
			return rules.Refusef(rules.InvalidTransition, "phase", "%s waits to land: work returns to it only after a review that requests changes (m1nd mission review %s --request-changes)", l.MissionID, l.MissionID)
		case head.Phase == PhaseReview && !RequestsChanges(head):
			return rules.Refusef(rules.InvalidTransition, "phase", "the review at the head of %s requests no changes: work returns to a mission only after a review whose verdict is CHANGE", l.MissionID)
		}
	}
	if l.Phase != PhaseArchived || (head != nil && head.Phase == PhaseMergeWait) {
		return nil
	}
	from := "no head"
	if head != nil {
		from = "a " + head.Phase + " head"
	}
	return rules.Refusef(rules.InvalidTransition, "phase", "archived only supersedes a merge_wait head, not %s", from)
}

// returnsToWork reports a phase of work on the mission: judging it,
// executing it, gating it.
func returnsToWork(phase string) bool {
	return phase == PhaseJudging || phase == PhaseExecuting || phase == PhaseGate
}

// CheckLanded is the landed law beyond the letter itself: a landed letter
// follows the merge_wait letter whose receipt candidate it lands (head,
// whose letter id is headID), and the store version it names holds the
// import a human made for this mission, of that candidate (landings nil:
// there is no store to hold it). Every other phase passes. Post and the
// laws of raw writes ask it alike.
func CheckLanded(l, head *Letter, headID string, landings Landings) error {
	if l.Phase != PhaseLanded {
		return nil
	}
	if head == nil || head.Phase != PhaseMergeWait || head.ReceiptCandidate == nil {
		from := "no head"
		if head != nil {
			from = "a " + head.Phase + " head"
		}
		return rules.Refusef(rules.LandedLaw, "phase", "landed follows the merge_wait letter whose receipt candidate it lands, not %s", from)
	}
	if l.ReceiptCandidate != nil && !bytes.Equal(CanonicalJSON(l.ReceiptCandidate), CanonicalJSON(head.ReceiptCandidate)) {
		return rules.Refusef(rules.LandedLaw, "receipt_candidate", "a landed letter carries the candidate of the merge_wait letter it lands, unchanged")
	}
	if landings == nil {
		return rules.Refusef(rules.LandedLaw, "receipt.store_version", "this brain has no store to land into: a landing imports the merge_wait candidate as a receipt first")
	}
	return landings.CheckLanding(LandingClaim{MissionID: l.MissionID, LetterID: headID, BlockID: l.BlockID, StoreVersion: l.Receipt.StoreVersion, Candidate: head.ReceiptCandidate})
}

// findLetter looks for letter id at position seq of the chain. A letter's
// seq is part of its bytes, so an identical letter can only sit there.
func (m *Missions) findLetter(c Chain, head Doc, headLetter *Letter, seq int64, id string) (gitstore.Hash, error) {
	if seq > headLetter.MissionSeq {
		return gitstore.ZeroHash, nil
	}
	if seq == headLetter.MissionSeq { // the common replay: the head itself, already read
		if head.ID == id {
			return head.Commit, nil
		}
		return gitstore.ZeroHash, nil
	}
	if len(head.Meta.Parents) == 0 {
		return gitstore.ZeroHash, nil // a chain cut short by hand: nothing older to match
	}
	var found gitstore.Hash
	pos := headLetter.MissionSeq - 1
	err := c.Walk(head.Meta.Parents[0], func(d Doc) error {
		if pos == seq {
			if d.ID == id {
				found = d.Commit
			}
			return gitstore.ErrStopWalk
		}
		pos--
		return nil
	})
	return found, err
}

// letterCommit is what names a letter's commit: the letter, its writer
// and, for a human's letter, its origin and proof.
func letterCommit(l *Letter, id string, req PostRequest, when time.Time) Commit {
	c := Commit{Agent: req.Agent, When: when, Doc: NamedLetter{Letter: l, ID: id}, Proof: req.Proof, Attestation: req.Attestation}
	if rules.IsHumanOrigin(req.Origin) {
		c.Origin = req.Origin
	}
	return c
}

// DecodeStoredHead reads a head letter as a heads view holds its bytes
// (chain.Head.Head): a letter already in a chain, decoded plainly.
func DecodeStoredHead(body []byte) (*Letter, error) { return decodeStored(body) }

// decodeStored reads a letter already in a chain. It was checked strictly
// when posted (and git hooks guard raw writes), so this is the plain, fast
// decode the heads path needs.
func decodeStored(body []byte) (*Letter, error) {
	var l Letter
	if err := json.Unmarshal(body, &l); err != nil {
		return nil, fmt.Errorf("stored letter: %w", err)
	}
	return &l, nil
}

// HeadOf returns a mission's current letter; ok is false when the mission
// has no chain.
func (m *Missions) HeadOf(missionID string) (*Head, bool, error) {
	ref, err := MissionRef(missionID)
	if err != nil {
		return nil, false, err
	}
	doc, ok, err := Chain{Repo: m.Repo, Kind: MissionKind, Ref: ref}.Head()
	if err != nil {
		return nil, false, err
	}
	folded := false
	if !ok {
		commit, inArchive, err := m.folded(missionID)
		if err != nil || !inArchive {
			return nil, false, err
		}
		body, _, err := m.Repo.ReadFileAt(commit, LetterFile)
		if err != nil {
			return nil, false, fmt.Errorf("mission %s, folded at %s: %w", missionID, commit, err)
		}
		doc, folded = Doc{Ref: ref, Commit: commit, Body: body}, true
	}
	h, err := newHead(missionID, doc.Commit, doc.Body)
	if h != nil {
		h.Folded = folded
	}
	return h, err == nil, err
}

// folded is the head commit of a mission the archive folds, when it does.
func (m *Missions) folded(missionID string) (gitstore.Hash, bool, error) {
	archive, ok, err := m.Repo.ReadRef(ArchiveRef)
	if err != nil || !ok {
		return gitstore.ZeroHash, false, err
	}
	return ArchivedHead(m.Repo, archive, missionID)
}

// Current returns a mission's head letter, refusing unknown_mission when
// the brain has no such mission.
func (m *Missions) Current(missionID string) (*Head, error) {
	head, ok, err := m.HeadOf(missionID)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, unknownMission(missionID)
	}
	return head, nil
}

func unknownMission(id string) error {
	return rules.Refusef(rules.UnknownMission, "mission_id", "no mission %s in this brain; `m1nd mission heads` lists the missions", id)
}

func newHead(missionID string, commit gitstore.Hash, body []byte) (*Head, error) {
	h, err := newHeadRaw(missionID, commit, body)
	if err != nil {
		return nil, err
	}
	if h.Letter, err = decodeStored(body); err != nil {
		return nil, fmt.Errorf("mission %s head %s: %w", missionID, commit, err)
	}
	return h, nil
}

// headFacts are the fields of a letter a raw head needs.
type headFacts struct {
	Phase      string `json:"phase"`
	MissionSeq int64  `json:"mission_seq"`
}

// newHeadRaw reads a head letter's facts without decoding the letter (the
// heads reply and the cache need its phase and sequence only): a cold
// heads call over 20k missions spent 30% in decoding letters whole and
// 16% in compacting them.
func newHeadRaw(missionID string, commit gitstore.Hash, body []byte) (*Head, error) {
	facts, err := readHeadFacts(body)
	if err != nil {
		return nil, fmt.Errorf("mission %s head %s: stored letter: %w", missionID, commit, err)
	}
	// A reply re-sends the head's bytes as they are (HeadsView.AppendJSON),
	// so they must be what encoding/json would have written: compact. A
	// stored letter is canonical, so compact, unless plain git wrote it.
	raw := body
	if !isCompactJSON(body) {
		var compact bytes.Buffer
		if err := json.Compact(&compact, body); err == nil {
			raw = compact.Bytes()
		}
	}
	return &Head{
		ID:              missionID,
		MissionID:       missionID,
		HeadLetterID:    LetterID(body),
		Head:            json.RawMessage(raw),
		SupersededCount: facts.MissionSeq - 1,
		Phase:           facts.Phase,
		Commit:          commit,
	}, nil
}

// readHeadFacts reads the phase and sequence of a stored letter: it checks
// that body is JSON (a reply re-sends it), then reads just those two
// members of the top-level object, where decoding through encoding/json
// walked every member by reflection.
func readHeadFacts(body []byte) (headFacts, error) {
	var facts headFacts
	if !json.Valid(body) {
		return facts, json.Unmarshal(body, &facts) // the error that says where
	}
	// Anything but a plain object, or a key encoding/json would match by
	// folding case or unescaping, is left to encoding/json itself.
	slow := func() (headFacts, error) {
		facts = headFacts{}
		return facts, json.Unmarshal(body, &facts)
	}
	i := skipSpace(body, 0)
	if i >= len(body) || body[i] != '{' {
		return slow()
	}
	i++
	for {
		i = skipSpace(body, i)
		if body[i] == '}' {
			return facts, nil
		}
		if body[i] == ',' {
			i = skipSpace(body, i+1)
		}
		keyEnd := skipJSONValue(body, i)
		key := body[i:keyEnd]
		i = skipSpace(body, keyEnd) + 1 // the colon
		i = skipSpace(body, i)
		end := skipJSONValue(body, i)
		var err error
		value := body[i:end]
		switch string(key) {
		case `"phase"`:
			// Plain UTF-8 with no escape is the string itself; anything else
			// (an escape, invalid UTF-8 that encoding/json replaces) is
			// decoded by encoding/json.
			if len(value) >= 2 && value[0] == '"' && bytes.IndexByte(value, '\\') < 0 && utf8.Valid(value) {
				facts.Phase = string(value[1 : len(value)-1])
			} else {
				facts.Phase = ""
				err = json.Unmarshal(value, &facts.Phase)
			}
		case `"mission_seq"`:
			if n, perr := strconv.ParseInt(string(value), 10, 64); perr == nil {
				facts.MissionSeq = n
			} else {
				facts.MissionSeq = 0
				err = json.Unmarshal(value, &facts.MissionSeq)
			}
		default:
			// Folding can match longer keys ("ſ", two bytes, folds to "s").
			if bytes.IndexByte(key, '\\') >= 0 || (len(key) >= len(`"phase"`) && len(key) <= 2*len(`"mission_seq"`) &&
				(bytes.EqualFold(key, []byte(`"phase"`)) || bytes.EqualFold(key, []byte(`"mission_seq"`)))) {
				return slow()
			}
		}
		if err != nil {
			return facts, err
		}
		i = end
	}
}

func skipSpace(data []byte, i int) int {
	for i < len(data) && (data[i] == ' ' || data[i] == '\n' || data[i] == '\t' || data[i] == '\r') {
		i++
	}
	return i
}

// skipJSONValue returns the index just past the value that starts at i in
// valid JSON data.
func skipJSONValue(data []byte, i int) int {
	depth, inString, escaped := 0, false, false
	for j := i; j < len(data); j++ {
		c := data[j]
		switch {
		case escaped:
			escaped = false
		case inString:
			if c == '\\' {
				escaped = true
			} else if c == '"' {
				inString = false
				if depth == 0 {
					return j + 1
				}
			}
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			depth++
		case c == '}' || c == ']':
			if depth == 0 {
				return j // the end of the enclosing object
			}
			depth--
			if depth == 0 {
				return j + 1
			}
		case depth == 0 && (c == ',' || c == ' ' || c == '\n' || c == '\t' || c == '\r'):
			return j // the end of a number or literal
		}
	}
	return len(data)
}

// isCompactJSON reports whether valid JSON data holds no white space
// outside its strings.
func isCompactJSON(data []byte) bool {
	inString, escaped := false, false
	for _, c := range data {
		switch {
		case escaped:
			escaped = false
		case inString:
			switch c {
			case '\\':
				escaped = true
			case '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == ' ' || c == '\n' || c == '\t' || c == '\r':
			return false
		}
	}
	return true
}

// Entry is one letter of a mission's log.
type Entry struct {
	LetterID string          `json:"letter_id"`
	Commit   string          `json:"commit"`
	Agent    string          `json:"agent"`
	Letter   json.RawMessage `json:"letter"`

	Decoded *Letter `json:"-"`
}

// Log returns a mission's letters, oldest first.
func (m *Missions) Log(ctx context.Context, missionID string) ([]Entry, error) {
	ref, err := MissionRef(missionID)
	if err != nil {
		return nil, err
	}
	c := Chain{Repo: m.Repo, Kind: MissionKind, Ref: ref}
	headHash, ok, err := m.Repo.ReadRef(ref)
	if err != nil {
		return nil, err
	}
	if !ok {
		if headHash, ok, err = m.folded(missionID); err != nil {
			return nil, err
		}
	}
	if !ok {
		return nil, unknownMission(missionID)
	}
	var out []Entry
	err = c.Walk(headHash, func(d Doc) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		l, err := decodeStored(d.Body)
		if err != nil {
			return fmt.Errorf("%s at %s: %w", missionID, d.Commit, err)
		}
		agent := d.Meta.Author.Name
		if a, err := AgentFromRefName(agent); err == nil {
			agent = a
		}
		out = append(out, Entry{LetterID: d.ID, Commit: d.Commit.String(), Agent: agent, Letter: d.Body, Decoded: l})
		return nil
	})
	if err != nil {
		return nil, err
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out, nil
}

// HeadsView is the reply of `mission heads`.
type HeadsView struct {
	ServedBrain string  `json:"served_brain"`
	Missions    []*Head `json:"missions"`
}

// AppendJSON appends the view's members as encoding/json would write them,
// without the braces (a reply that embeds the view wraps them, with its
// own members before and after). Each head letter goes out as its stored
// bytes: encoding/json validates and compacts every raw message again,
// which at 100,000 heads cost more than reading them.
func (v *HeadsView) AppendJSON(b []byte) []byte {
	var brain bytes.Buffer
	enc := json.NewEncoder(&brain)
	enc.SetEscapeHTML(false) // as m1nd's replies are written
	enc.Encode(v.ServedBrain)
	need := 64 + len(brain.Bytes())
	for _, h := range v.Missions {
		need += 110 + len(h.Head) // the members around each letter
	}
	b = slices.Grow(b, need)
	b = append(b, `"served_brain":`...)
	b = append(b, bytes.TrimSuffix(brain.Bytes(), []byte("\n"))...)
	b = append(b, `,"missions":[`...)
	for i, h := range v.Missions {
		if i > 0 {
			b = append(b, ',')
		}
		// Mission and letter ids are validated ASCII: no escaping needed.
		b = append(b, `{"id":"`...)
		b = append(b, h.ID...)
		b = append(b, `","mission_id":"`...)
		b = append(b, h.MissionID...)
		b = append(b, `","head_letter_id":"`...)
		b = append(b, h.HeadLetterID...)
		b = append(b, `","head":`...)
		b = append(b, h.Head...)
		b = append(b, `,"superseded_count":`...)
		b = strconv.AppendInt(b, h.SupersededCount, 10)
		if h.Fault != nil { // rare: written as encoding/json writes it
			var f bytes.Buffer
			enc := json.NewEncoder(&f)
			enc.SetEscapeHTML(false)
			enc.Encode(h.Fault)
			b = append(b, `,"fault":`...)
			b = append(b, bytes.TrimSuffix(f.Bytes(), []byte("\n"))...)
		}
		b = append(b, '}')
	}
	return append(b, ']')
}

// Heads returns every mission's head with its letter decoded, ordered by
// mission id, optionally only those in the phases given ("" or none: every
// phase).
func (m *Missions) Heads(ctx context.Context, phases ...string) (*HeadsView, error) {
	view, err := m.HeadsRaw(ctx, phases...)
	if err != nil {
		return nil, err
	}
	errs := make([]error, len(view.Missions))
	gitstore.Parallel(len(view.Missions), func(i int) {
		h := view.Missions[i]
		if h.Letter == nil {
			if h.Letter, errs[i] = decodeStored(h.Head); errs[i] != nil {
				errs[i] = fmt.Errorf("mission %s head %s: %w", h.MissionID, h.Commit, errs[i])
			}
		}
	})
	return view, errors.Join(errs...)
}

// HeadsRaw returns every mission's head, ordered by mission id, optionally
// only those in the phases given ("" or none: every phase), without
// decoding the letters a warm cache holds (their Letter is nil): the view
// for a reply that sends the letters as they are, and for counts by phase.
// Heads are read in parallel: a brain may hold thousands of missions.
func (m *Missions) HeadsRaw(ctx context.Context, phases ...string) (*HeadsView, error) {
	refs, err := listMissions(m.Repo)
	if err != nil {
		return nil, err
	}
	cache := loadHeadCache(m.Repo)
	heads := make([]*Head, len(refs))
	var misses []int
	for i, r := range refs { // mission refs only: listMissions leaves stray names out
		id := r.Name[len(MissionRefPrefix):]
		if e, ok := cache.entries[r.Hash]; ok {
			heads[i] = &Head{ID: id, MissionID: id, HeadLetterID: e.letterID, Head: e.body, SupersededCount: e.seq - 1, Phase: e.phase, Commit: r.Hash}
		} else {
			misses = append(misses, i)
		}
	}
	errs := make([]error, len(misses))
	gitstore.Parallel(len(misses), func(k int) {
		if errs[k] = ctx.Err(); errs[k] != nil {
			return
		}
		i := misses[k]
		id := refs[i].Name[len(MissionRefPrefix):]
		// Cold letters (no cache yet, or a sync brought them) are read in
		// process, in parallel: gitstore's pack reader takes no lock, and
		// this beat a git cat-file --batch pipeline, loose or packed.
		body, _, err := m.Repo.ReadFileAt(refs[i].Hash, LetterFile)
		if err != nil {
			errs[k] = fmt.Errorf("mission %s: %w", id, err)
			return
		}
		heads[i], errs[k] = newHeadRaw(id, refs[i].Hash, body)
	})
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	view := &HeadsView{ServedBrain: m.Brain, Missions: heads}
	if phases = slices.DeleteFunc(slices.Clone(phases), func(p string) bool { return p == "" }); len(phases) > 0 {
		view.Missions = slices.DeleteFunc(slices.Clone(heads), func(h *Head) bool { return !slices.Contains(phases, h.Phase) })
	}
	if len(misses) > 0 || len(cache.entries) != len(heads) {
		cache.store(heads)
	}
	// refs are sorted by name and every mission ref shares one prefix, so
	// the heads are in mission id order already.
	return view, nil
}

// LandingBell counts heads waiting for a human landing (phase merge_wait)
// whose chains keep the laws: a broken head lands nothing.
func LandingBell(heads []*Head) int {
	n := 0
	for _, h := range heads {
		if h.Phase == PhaseMergeWait && h.Fault == nil {
			n++
		}
	}
	return n
}
