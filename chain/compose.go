package chain

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/m1nd/m1nd/gitstore"
	"github.com/m1nd/m1nd/rules"
)

// NewMission describes a mission to open.
type NewMission struct {
	BlockID    string
	Seat       string // default "hand"
	Capability string // default "hand-runner"
	RunnerID   string // optional
	Packet     []byte // optional mission packet markdown; its hash becomes packet_ref
	Synthetic  bool
	Agent      string
	Now        time.Time
}

// PacketRef is "sha256:" + hex(sha256(markdown)).
func PacketRef(markdown []byte) string {
	sum := sha256.Sum256(markdown)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// Timestamp formats t the way letters carry it: RFC 3339, UTC, seconds.
func Timestamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// New opens a mission: a fresh id and its seq-1 judging letter, posted
// through the same law as any other letter.
func (m *Missions) New(ctx context.Context, req NewMission) (*PostResult, error) {
	id, err := NewMissionID()
	if err != nil {
		return nil, err
	}
	if req.Seat == "" {
		req.Seat = "hand"
	}
	if req.Capability == "" {
		req.Capability = "hand-runner"
	}
	now := Timestamp(req.Now)
	l := &Letter{
		Schema:     LetterSchema,
		MissionID:  id,
		MissionSeq: 1,
		BlockID:    req.BlockID,
		BrainRef:   m.Brain,
		Seat:       req.Seat,
		Capability: req.Capability,
		Phase:      PhaseJudging,
		Synthetic:  req.Synthetic,
		StartedAt:  now,
		UpdatedAt:  now,
	}
	if req.RunnerID != "" {
		l.RunnerID = &req.RunnerID
	}
	if req.Packet != nil {
		ref := PacketRef(req.Packet)
		l.PacketRef = &ref
	}
	return m.Post(ctx, PostRequest{Body: l.Canonical(), Agent: req.Agent})
}

// Next returns a copy of head that extends it: seq+1, prev_letter_id set
// to headID, updated_at now. Callers then set the phase and evidence.
func Next(head *Letter, headID string, now time.Time) *Letter {
	next := *head
	id := headID
	next.MissionSeq = head.MissionSeq + 1
	next.PrevLetterID = &id
	next.UpdatedAt = Timestamp(now)
	return &next
}

// SetPhase moves a letter to phase and drops what that phase does not
// carry, so a letter moved on from a head validates: an executing letter
// has no verdict; an archived one sets the receipt candidate and any
// receipt aside (they stay on the superseded letter forever).
func (l *Letter) SetPhase(phase string) {
	l.Phase = phase
	switch phase {
	case PhaseExecuting:
		l.Verdict = nil
	case PhaseArchived:
		l.ReceiptCandidate, l.Receipt = nil, nil
	}
}

// Archive posts the human archive gesture on a merge_wait head: an
// archived letter at seq+1 that sets the receipt candidate aside (it stays
// on the superseded letter forever). origin must be on the human allow-list.
func (m *Missions) Archive(ctx context.Context, missionID, agent, origin string, now time.Time) (*PostResult, error) {
	if err := rules.RequireHumanOrigin(origin, "archived_via"); err != nil {
		return nil, err
	}
	letter, err := m.ArchiveLetter(missionID, now)
	if err != nil {
		return nil, err
	}
	return m.Post(ctx, PostRequest{Body: letter, Agent: agent, Origin: origin})
}

// ArchiveLetter is the archived letter that would supersede a mission's
// head now, in canonical bytes: what an archive posts, and what a passkey
// signs before it does. A head that is not merge_wait is refused
// invalid_transition.
func (m *Missions) ArchiveLetter(missionID string, now time.Time) ([]byte, error) {
	_, next, err := m.archiveNext(missionID, now)
	if err != nil {
		return nil, err
	}
	return next.Canonical(), nil
}

// archiveNext is a mission's head and the archived letter that would
// supersede it now.
func (m *Missions) archiveNext(missionID string, now time.Time) (*Head, *Letter, error) {
	head, err := m.Current(missionID)
	if err != nil {
		return nil, nil, fmt.Errorf("archive %s: %w", missionID, err)
	}
	next := Next(head.Letter, head.HeadLetterID, now)
	next.SetPhase(PhaseArchived)
	if err := CheckTransition(next, head.Letter); err != nil {
		return nil, nil, err
	}
	return head, next, nil
}

// PrepareArchive prepares the archive gesture on a mission's merge_wait
// head, for a passkey to sign: the one commit it writes (the archived
// letter, on the head it supersedes), whose proof binds the letter's
// canonical bytes. Nothing a ref reaches is written.
func (m *Missions) PrepareArchive(missionID, agent string, now time.Time) (*Prepared, error) {
	head, next, err := m.archiveNext(missionID, now)
	if err != nil {
		return nil, err
	}
	if err := Validate(next); err != nil {
		return nil, err
	}
	body := next.Canonical()
	ref, _ := MissionRef(missionID)
	blob, err := m.Repo.WriteBlob(body)
	if err != nil {
		return nil, err
	}
	tree, err := m.Repo.WriteTree([]gitstore.TreeEntry{{Name: LetterFile, Mode: gitstore.ModeFile, Hash: blob}})
	if err != nil {
		return nil, err
	}
	when, _ := time.Parse(time.RFC3339, next.UpdatedAt)
	return &Prepared{
		Chain: Chain{Repo: m.Repo, Kind: MissionKind, Ref: ref}, Parent: head.Commit, Tree: tree,
		Meta: letterCommit(next, LetterID(body), PostRequest{Agent: agent}, when), Gesture: rules.GestureArchive, Change: body,
	}, nil
}

// BrokenPhase is what PhaseCounts counts a head under when its history
// breaks the laws: never the phase it claims.
const BrokenPhase = "broken"

// PhaseCounts counts heads per phase; a head marked with a Fault counts
// under BrokenPhase.
func PhaseCounts(heads []*Head) map[string]int {
	out := map[string]int{}
	for _, h := range heads {
		if h.Fault != nil {
			out[BrokenPhase]++
			continue
		}
		out[h.Phase]++
	}
	return out
}
