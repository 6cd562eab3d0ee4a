package ops

import (
	"context"
	"time"

	"github.com/m1nd/m1nd/brain"
	"github.com/m1nd/m1nd/chain"
	"github.com/m1nd/m1nd/gitstore"
	"github.com/m1nd/m1nd/internal/secret"
	"github.com/m1nd/m1nd/mailbox"
	"github.com/m1nd/m1nd/memory"
	"github.com/m1nd/m1nd/rules"
)

// The brain's parts as the front ends ask them. A front end holds one
// *Flows and asks it; the parts (the block store, the mission chains, the
// mail, the memory book) stay inside, wired once in New, so each write has
// one road: the part's own, through these methods or a flow above them.

// Keys are the brain's registered passkeys now (nil: none).
func (b *Flows) Keys() (*brain.KeySet, error) { return b.store.Keys() }

// Snapshot is the block store now; ok is false when there is none.
func (b *Flows) Snapshot() (snap *brain.Snapshot, ok bool, err error) { return b.store.Snapshot() }

// Env is what the laws know of this brain when judging a letter here.
func (b *Flows) Env() (chain.Env, error) { return b.store.Env() }

// Packet is the work packet of block id with ask, as of now.
func (b *Flows) Packet(id, ask string, now time.Time) (string, error) {
	return b.store.Packet(id, ask, now)
}

// Files are the files each of blocks owns, by block id.
func (b *Flows) Files(blocks ...*brain.Block) (map[string][]string, error) {
	return b.store.Files(blocks...)
}

// Scan writes the store's first skeleton from the repository's files.
func (b *Flows) Scan(ctx context.Context, req brain.WriteRequest) (*brain.ScanResult, error) {
	return b.store.Scan(ctx, req)
}

// Reconcile brings the skeleton in line with the files as they are now.
func (b *Flows) Reconcile(ctx context.Context, req brain.WriteRequest) (*brain.ReconcileResult, error) {
	return b.store.Reconcile(ctx, req)
}

// Edit applies a candidate edit of the skeleton.
func (b *Flows) Edit(ctx context.Context, req brain.EditRequest) (*brain.EditResult, error) {
	return b.store.Edit(ctx, req)
}

// Ratify ratifies blocks: a human gesture.
func (b *Flows) Ratify(ctx context.Context, req brain.RatifyRequest) (*brain.RatifyResult, error) {
	return b.store.Ratify(ctx, req)
}

// ImportReceipt imports a receipt into the store: a human gesture.
func (b *Flows) ImportReceipt(ctx context.Context, req brain.ImportRequest) (*brain.ImportResult, error) {
	return b.store.ImportReceipt(ctx, req)
}

// Log is every letter of mission missionID, oldest first.
func (b *Flows) Log(ctx context.Context, missionID string) ([]chain.Entry, error) {
	return b.missions.Log(ctx, missionID)
}

// Current is mission missionID's head.
func (b *Flows) Current(missionID string) (*chain.Head, error) { return b.missions.Current(missionID) }

// Archive archives mission missionID: a human gesture, with origin.
func (b *Flows) Archive(ctx context.Context, missionID, agent, origin string, now time.Time) (*chain.PostResult, error) {
	return b.missions.Archive(ctx, missionID, agent, origin, now)
}

// PrepareArchive prepares the archive of missionID for a passkey to sign.
func (b *Flows) PrepareArchive(missionID, agent string, now time.Time) (*chain.Prepared, error) {
	return b.missions.PrepareArchive(missionID, agent, now)
}

// Mail is every letter in the brain, and each one's fate.
func (b *Flows) Mail(ctx context.Context) ([]mailbox.Stored, map[string]string, error) {
	all, err := b.box.All(ctx)
	if err != nil {
		return nil, nil, err
	}
	return all, b.box.Fates(all), nil
}

// Unnoted are the letters of waiting that agent was not yet told of.
func (b *Flows) Unnoted(ctx context.Context, agent string, waiting []mailbox.Stored) ([]mailbox.Stored, error) {
	return b.box.Unnoted(ctx, agent, waiting)
}

// Failed gives back the letters a kept session of agent failed to answer.
func (b *Flows) Failed(ctx context.Context, agent, session, why string) (kept, gaveUp []mailbox.InFlight, err error) {
	return b.box.Failed(ctx, agent, session, why)
}

// Release gives back the letters delivered to agent's sessions that no
// longer run (alive says which do).
func (b *Flows) Release(ctx context.Context, agent string, alive func(session string) bool) (again, gaveUp []mailbox.InFlight, err error) {
	return b.box.Release(ctx, agent, alive)
}

// Memories is every agent's memories and follow-ups, as they stand.
func (b *Flows) Memories(ctx context.Context) (*memory.View, error) { return b.book.View(ctx) }

// Recall is the memories req asks for; cut says how many were left out.
func (b *Flows) Recall(ctx context.Context, req memory.RecallRequest) (out []*memory.Memory, cut int, err error) {
	return b.book.Recall(ctx, req)
}

// Resolve resolves agent's memory or follow-up id as as, with rationale.
func (b *Flows) Resolve(ctx context.Context, agent, id, as, rationale string, now time.Time) (string, error) {
	return b.book.Resolve(ctx, agent, id, as, rationale, now)
}

// HeadOf is mission missionID's head; ok is false when there is none.
func (b *Flows) HeadOf(missionID string) (head *chain.Head, ok bool, err error) {
	return b.missions.HeadOf(missionID)
}

// HeadsIn are the heads of every mission now in one of phases (all when
// none is named), decoded, as the engine reads them: unlike Heads, which
// the views read, no head is judged for soundness (runnerd's queue looks
// every few seconds, and the laws judge whatever it then writes).
func (b *Flows) HeadsIn(ctx context.Context, phases ...string) (*chain.HeadsView, error) {
	return b.missions.Heads(ctx, phases...)
}

// TerminalGesture refuses a gesture that a terminal's confirmation cannot
// make here (the brain has a passkey): brain.TerminalGesture.
func (b *Flows) TerminalGesture(gesture string) error { return brain.TerminalGesture(b.repo, gesture) }

// StoreVersion is the store's version now (0 and false: none yet).
func (b *Flows) StoreVersion() (int64, bool, error) { return brain.StoreVersion(b.repo) }

// Layout is how the skeleton of snap lays the repository's files out.
func (b *Flows) Layout(snap *brain.Snapshot) (brain.Ownership, error) { return b.store.Layout(snap) }

// InFlight is every letter delivered to a session and not yet answered.
func (b *Flows) InFlight() ([]mailbox.AgentInFlight, error) { return b.box.AllInFlight() }

// ApprovedPins is the runner pins a human approved (nil: none yet).
func (b *Flows) ApprovedPins() (*brain.PinSet, error) { return brain.ApprovedPins(b.repo) }

// RunnerKey is the public key of this machine's runnerd, which signs what
// its runners' gates tested (made when missing).
func (b *Flows) RunnerKey() (string, error) { return secret.RunnerPublicKey(b.repo) }

// PreparePins prepares the approval of approvals as the next pin set: a
// human gesture, confirmed at a terminal or signed by a passkey.
func (b *Flows) PreparePins(ctx context.Context, approvals []brain.ApprovedRunner, now time.Time) (*chain.Prepared, *brain.PinSet, error) {
	return brain.PreparePins(ctx, b.repo, approvals, now)
}

// CommitPins writes the prepared pin set with the gesture's origin and
// proof (nil at a terminal).
func (b *Flows) CommitPins(ctx context.Context, p *chain.Prepared, origin string, proof *rules.Proof) (gitstore.Hash, error) {
	return b.store.CommitPins(ctx, p, origin, proof)
}

// RegisterFirstKey registers the brain's first passkey (the tray, with
// its one-time code): trusted on first sight, per clone.
func (b *Flows) RegisterFirstKey(ctx context.Context, key brain.Passkey, now time.Time) (*brain.KeySet, error) {
	return brain.RegisterFirstKey(ctx, b.repo, key, now)
}

// PrepareAddKey prepares the next key set with key added: a gesture a
// registered passkey signs.
func (b *Flows) PrepareAddKey(key brain.Passkey, now time.Time) (*brain.KeyChange, error) {
	return brain.PrepareAddKey(b.repo, key, now)
}

// PrepareRemoveKey prepares the next key set without credentialID: a
// gesture a registered passkey signs.
func (b *Flows) PrepareRemoveKey(ctx context.Context, credentialID string, now time.Time) (*brain.KeyChange, error) {
	return brain.PrepareRemoveKey(ctx, b.repo, credentialID, now)
}

// FirstKeySet is the first key set the brain registered (nil: none), whose
// fingerprint a team compares.
func (b *Flows) FirstKeySet() (*brain.KeySet, error) {
	head, ok, err := b.repo.ReadRef(brain.KeysRef)
	if err != nil || !ok {
		return nil, err
	}
	return brain.FirstSet(b.repo, head)
}
