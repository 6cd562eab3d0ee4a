package ops

import (
	"context"
	"fmt"
	"time"

	"github.com/m1nd/m1nd/brain"
	"github.com/m1nd/m1nd/chain"
	"github.com/m1nd/m1nd/mailbox"
	"github.com/m1nd/m1nd/rules"
)

// MissionRequest is what opening a mission takes: the seq-1 judging
// letter's fields, and what should follow the opening.
type MissionRequest struct {
	BlockID    string // the block the mission is about (or the skeleton id)
	Seat       string // oracle or hand; hand when ""
	Capability string // hand-runner when ""
	RunnerID   string // the pinned runner that runs it, if any
	Packet     []byte // the mission packet markdown; nil for none. Its sha256 becomes packet_ref
	Synthetic  bool   // a probe: skips the block check
	Agent      string // who opens it: the letter's author

	// DeliverTo, when set, is the agent whose inbox gets the packet as a
	// letter of class packet (direct delivery: delivery is not execution).
	DeliverTo string
	// Followup, when set, is the follow-up id this mission carries: its
	// end closes the follow-up.
	Followup string

	Now time.Time
}

// OpenedMission is what OpenMission did.
type OpenedMission struct {
	Mission   *chain.PostResult   // the judging letter posted
	Delivered *mailbox.SendResult // the packet letter; nil when not delivered
}

// OpenMission opens a mission: its judging letter (chain.Missions.New),
// then the follow-up link, then the packet's delivery. Everything that
// would refuse the link or the delivery is asked first, so a refusal
// leaves nothing written:
//   - a packet the delivery would refuse (a bad recipient, the sender
//     itself, a packet too long or with unsafe text) → invalid_letter on
//     field deliver_to;
//   - a follow-up that does not exist or that the agent neither opened nor
//     owes → memory's not_publisher on field followup;
//   - a clone with a remote whose brain's name is neither registered nor
//     fixed by a mission yet (init could not ask the remote) →
//     brain_mismatch: the first mission would name the brain after this
//     clone's folder, apart from the brain it was cloned from;
//   - then the letter's own law (unknown_block, invalid_letter, …).
//
// Once the mission is open, a link or a delivery that fails is an error
// that says so, never a refusal: the mission stays, and OpenMission
// returns it with the error.
func (b *Flows) OpenMission(ctx context.Context, req MissionRequest) (*OpenedMission, error) {
	if req.DeliverTo != "" {
		if err := b.box.CheckPacket(req.Agent, req.DeliverTo, req.Packet, req.Now); err != nil {
			if r, ok := rules.AsRefusal(err); ok {
				return nil, rules.Refusef(rules.InvalidLetter, "deliver_to", "the packet cannot be delivered: %s", r.Lesson)
			}
			return nil, fmt.Errorf("check the packet's delivery: %w", err)
		}
	}
	if req.Followup != "" {
		if err := b.book.CheckLink(ctx, req.Agent, req.Followup); err != nil {
			if _, ok := rules.AsRefusal(err); ok {
				return nil, err
			}
			return nil, fmt.Errorf("check follow-up %s: %w", req.Followup, err)
		}
	}
	if err := b.checkNamed(ctx); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	res, err := b.missions.New(ctx, chain.NewMission{
		BlockID: req.BlockID, Seat: req.Seat, Capability: req.Capability, RunnerID: req.RunnerID,
		Packet: req.Packet, Synthetic: req.Synthetic, Agent: req.Agent, Now: req.Now,
	})
	if err != nil {
		return nil, err
	}
	out := &OpenedMission{Mission: res}
	if req.Followup != "" {
		if _, err := b.book.Link(ctx, req.Agent, req.Followup, res.MissionID, req.Now); err != nil {
			return out, fmt.Errorf("mission %s is open, but not linked to follow-up %s: %w", res.MissionID, req.Followup, err)
		}
	}
	if req.DeliverTo != "" {
		if out.Delivered, err = b.box.SendPacket(ctx, req.Agent, req.DeliverTo, res.MissionID, req.Packet, req.Now); err != nil {
			return out, fmt.Errorf("mission %s is open, but its packet was not delivered to %s: %w", res.MissionID, req.DeliverTo, err)
		}
	}
	return out, nil
}

// PostLetter posts one letter a writer composed (DESIGN §4's post, every
// law in chain.Missions.Post): the one road of a letter from a front end —
// the CLI's mission post, the tray's and MCP's mission_post.
func (b *Flows) PostLetter(ctx context.Context, body []byte, agent string) (*chain.PostResult, error) {
	return b.Post(ctx, chain.PostRequest{Body: body, Agent: agent})
}

// Post appends the letter req carries under the post law: PostLetter with
// what a runner adds (its signature over a merge_wait's gate).
func (b *Flows) Post(ctx context.Context, req chain.PostRequest) (*chain.PostResult, error) {
	return b.missions.Post(ctx, req)
}

// checkNamed refuses the first mission of a clone that has a remote but
// has not learned the brain's registered name from it: its letters would
// carry this clone's own name (its folder's), and from then on the clones
// would refuse each other's letters. A registered brain, one whose
// missions fixed its name, and one with no remote open missions freely.
func (b *Flows) checkNamed(ctx context.Context) error {
	// Whether a registration exists is all this asks (the laws judge it):
	// one ref read on the path of every mission opened.
	if _, ok, err := b.repo.ReadRef(brain.RegistrationRef); err != nil || ok {
		return err
	}
	if _, fixed, err := brain.FixedName(b.repo); err != nil || fixed {
		return err
	}
	remote := b.remote(ctx, b.repo.RemoteDir())
	if remote == "" {
		return nil
	}
	return rules.Refusef(rules.BrainMismatch, "brain",
		"this clone has not learned the brain's registered name from %s yet, and a mission opened now would name the brain %q, apart from the one it was cloned from: run m1nd sync (it adopts %s's name, or registers this one when %s has none), then open the mission", remote, b.Name(), remote, remote)
}
