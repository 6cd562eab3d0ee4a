package tray

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/m1nd/m1nd/brain"
	"github.com/m1nd/m1nd/chain"
	"github.com/m1nd/m1nd/gitstore"
	"github.com/m1nd/m1nd/ops"
	"github.com/m1nd/m1nd/rules"
)

// A human gesture in the tray is signed by the brain's registered passkey:
// the page asks for options, the owner prepares the one commit the gesture
// writes (chain.Prepared: the archived letter; the store commit of an
// import, a landing or a ratification; the next key set; the approved
// runner pins) and hands out its challenge under an id of its own, with
// what the signature binds; the browser's authenticator signs it with the
// user present; and the commit is written with the proof on it, judged by
// the laws that judge it everywhere. The API never takes a gesture's
// origin from a request body.

// landDone answers the options of a landing that needs no signature: an
// import made for this very mission was cut short, and this finished it.
type landDone struct {
	Done bool `json:"done"`
	*ops.LandResult
}

// gestureRequest is POST /api/gesture/options: a gesture and its inputs.
type gestureRequest struct {
	Gesture              string          `json:"gesture"`
	ExpectedStoreVersion *int64          `json:"expected_store_version,omitempty"`
	BlockID              string          `json:"block_id,omitempty"`
	Receipt              json.RawMessage `json:"receipt,omitempty"`
	BlockIDs             []string        `json:"block_ids,omitempty"`
	MissionID            string          `json:"mission_id,omitempty"`
	Into                 string          `json:"into,omitempty"` // land: the target branch, "" for the recorded one
	AgentID              string          `json:"agent_id,omitempty"`
	// keys: a new passkey (navigator.credentials.create's answer to
	// /api/passkey/options) and its label, a teammate's enrolment request,
	// or the credential id to remove.
	Credential json.RawMessage `json:"credential,omitempty"`
	Label      string          `json:"label,omitempty"`
	Enrol      string          `json:"enrol,omitempty"`
	Remove     string          `json:"remove,omitempty"`
}

// pendingGesture is one gesture prepared for its signature: the one commit
// it writes, what the human is shown it binds, a check that what they saw
// still stands when the signature comes back, and what follows the commit.
type pendingGesture struct {
	gesture string
	commit  *chain.Prepared
	binds   []string
	// still is asked just before the commit: nil when what was prepared
	// still describes the brain (a landing's branch and target, say).
	still func(ctx context.Context) error
	// done answers the committed gesture, after what follows it (a
	// landing's merge and landed letter).
	done func(ctx context.Context, commit gitstore.Hash) (any, error)
	// signers are the credentials that may sign it; nil for the brain's keys.
	signers []brain.Passkey
}

// gestureOptions is the reply to options: the id to commit by, what the
// signature binds, and what navigator.credentials.get takes, its binary
// fields base64url.
type gestureOptions struct {
	GestureID string   `json:"gesture_id"`
	Gesture   string   `json:"gesture"`
	Binds     []string `json:"binds"`
	PublicKey struct {
		Challenge        string              `json:"challenge"`
		RPID             string              `json:"rpId"`
		AllowCredentials []allowedCredential `json:"allowCredentials"`
		UserVerification string              `json:"userVerification"`
		Timeout          int64               `json:"timeout"`
	} `json:"publicKey"`
}

type allowedCredential struct {
	Type string `json:"type"`
	ID   string `json:"id"`
}

// postGestureOptions prepares a gesture and hands out its challenge.
// Nothing is committed: the gesture's objects are written but no ref
// points at them until the signed gesture comes back.
func (s *Server) postGestureOptions(r *http.Request, body []byte) (any, error) {
	// The gate comes before the input is parsed (DESIGN §7).
	keys, err := s.flows.Keys()
	if err != nil {
		return nil, err
	}
	if keys == nil || len(keys.Keys) == 0 {
		return nil, rules.Refusef(rules.HumanGestureRequired, "proof", "register a passkey first (m1nd serve prints a one-time code), or make this gesture at a terminal")
	}
	session, err := s.sessionOf(r, keys)
	if err != nil {
		return nil, err
	}
	var req gestureRequest
	if err := decodeRequest(body, &req); err != nil {
		return nil, err
	}
	if err := s.gestures.room(session, gestureSubject(req), s.now()); err != nil {
		return nil, err
	}
	p, subject, done, err := s.prepareGesture(r.Context(), req)
	if err != nil || done != nil {
		return done, err
	}
	id, err := s.gestures.put(session, subject, p, s.now())
	if err != nil {
		return nil, err
	}
	reply := gestureOptions{GestureID: id, Gesture: p.gesture, Binds: p.binds}
	reply.PublicKey.Challenge = base64.RawURLEncoding.EncodeToString(p.commit.Challenge())
	reply.PublicKey.RPID = rules.RelyingParty
	reply.PublicKey.UserVerification = "preferred"
	reply.PublicKey.Timeout = challengeTTL.Milliseconds()
	signers := keys.Keys
	if p.signers != nil {
		signers = p.signers
	}
	for _, k := range signers {
		reply.PublicKey.AllowCredentials = append(reply.PublicKey.AllowCredentials, allowedCredential{Type: "public-key", ID: k.CredentialID})
	}
	return reply, nil
}

// gestureSubject is what a gesture is about, for the caps on what waits:
// a mission, or the store, the keys, the pins.
func gestureSubject(req gestureRequest) string {
	switch req.Gesture {
	case rules.GestureLand, rules.GestureArchive:
		return req.MissionID
	case rules.GestureReceiptImport, rules.GestureRatify:
		return "store"
	}
	return req.Gesture
}

// prepareGesture prepares the gesture req asks for and names what it is
// about; a landing that needs no signature is finished at once (done).
func (s *Server) prepareGesture(ctx context.Context, req gestureRequest) (p *pendingGesture, subject string, done any, err error) {
	now := s.now()
	switch req.Gesture {
	case rules.GestureLand:
		agent, err := agentOrOwner(req.AgentID, "agent_id")
		if err != nil {
			return nil, "", nil, err
		}
		plan, err := s.flows.PlanLanding(ctx, req.MissionID, req.Into)
		if err != nil {
			return nil, "", nil, err
		}
		if plan.AlreadyLanded || plan.Resume {
			// An import made for this mission is in the store already (a
			// landing cut short): what is left is finished as it recorded.
			res, err := s.flows.LandPlanned(ctx, plan, agent, rules.OriginHumanPasskey, now)
			if err != nil {
				return nil, "", nil, err
			}
			return nil, "", landDone{Done: true, LandResult: res}, nil
		}
		p, err := s.prepareLanding(ctx, plan, agent)
		return p, gestureSubject(req), nil, err
	case rules.GestureArchive:
		agent, err := agentOrOwner(req.AgentID, "agent_id")
		if err != nil {
			return nil, "", nil, err
		}
		p, err := s.prepareArchive(ctx, req.MissionID, agent)
		return p, gestureSubject(req), nil, err
	case rules.GestureReceiptImport, rules.GestureRatify:
		w, err := s.writeRequest(req.ExpectedStoreVersion, req.AgentID, "agent_id")
		if err != nil {
			return nil, "", nil, err
		}
		p, err := s.prepareStoreGesture(ctx, req, w)
		return p, gestureSubject(req), nil, err
	case rules.GestureKeys:
		p, err := s.prepareKeys(ctx, req)
		return p, gestureSubject(req), nil, err
	case rules.GesturePins:
		p, err := s.preparePins(ctx)
		return p, gestureSubject(req), nil, err
	}
	return nil, "", nil, rules.Refusef(rules.InvalidLetter, "gesture", "gesture is land, archive, receipt_import, ratify, keys or pins")
}

// prepareLanding prepares a landing's import: it binds the mission, its
// merge_wait letter, the target, the branch's and the target's heads, the
// tree the target will hold and the store change. At the commit the plan
// is worked out again and must be the same, or nothing is written.
func (s *Server) prepareLanding(ctx context.Context, plan *ops.LandingPlan, agent string) (*pendingGesture, error) {
	commit, version, err := s.flows.PrepareLanding(ctx, plan, agent, s.now())
	if err != nil {
		return nil, err
	}
	binds := []string{
		fmt.Sprintf("landing %s of block %s, its merge_wait letter %s", plan.MissionID, plan.BlockID, plan.Lands.LetterID),
		fmt.Sprintf("the receipt imported at store v%d (on v%d, %.12s)", version, version-1, commit.Parent),
	}
	if plan.Lands.Target == "" {
		binds = append(binds, "no branch to merge: only the receipt lands")
	} else {
		binds = append(binds,
			fmt.Sprintf("%s at %.12s lands in %s at %.12s (%s)", plan.Branch, plan.Lands.BranchHead, plan.Target, plan.Lands.TargetHead, plan.Merge),
			fmt.Sprintf("%s then holds tree %.12s", plan.Target, plan.Lands.Tree))
	}
	into := plan.Target
	return &pendingGesture{
		gesture: rules.GestureLand, commit: commit, binds: binds,
		still: func(ctx context.Context) error {
			again, err := s.flows.PlanLanding(ctx, plan.MissionID, into)
			if err != nil {
				return err
			}
			if again.Resume || again.AlreadyLanded || again.Lands == nil || *again.Lands != *plan.Lands {
				return rules.Refusef(rules.StaleHead, "mission_id", "%s, its branch or %s moved since the landing was shown to you: nothing was written; look again and land again", plan.MissionID, rules.Echo(into))
			}
			return nil
		},
		done: func(ctx context.Context, _ gitstore.Hash) (any, error) {
			plan.Resume, plan.StoreVersion = true, version
			res, err := s.flows.FinishLanding(ctx, plan, agent, s.now())
			if res != nil {
				res.Imported = true
			}
			return res, err
		},
	}, nil
}

// prepareArchive prepares the archived letter over a merge_wait head.
func (s *Server) prepareArchive(ctx context.Context, missionID, agent string) (*pendingGesture, error) {
	if err := s.flows.CheckSound(ctx, chain.MissionRefPrefix+missionID); err != nil {
		return nil, err
	}
	commit, err := s.flows.PrepareArchive(missionID, agent, s.now())
	if err != nil {
		return nil, err
	}
	return &pendingGesture{
		gesture: rules.GestureArchive, commit: commit,
		binds: []string{fmt.Sprintf("archiving %s: its merge_wait letter %.12s is superseded by archived letter %s, and its candidate is set aside", missionID, headLetterOf(commit), chain.LetterID(commit.Change))},
		done: func(_ context.Context, h gitstore.Hash) (any, error) {
			var l chain.Letter
			_ = json.Unmarshal(commit.Change, &l)
			return &chain.PostResult{ID: l.MissionID, MissionID: l.MissionID, LetterID: chain.LetterID(commit.Change), MissionSeq: l.MissionSeq, Phase: l.Phase, Ref: commit.Chain.Ref, Commit: h.String()}, nil
		},
	}, nil
}

// headLetterOf is the letter id an archived letter supersedes.
func headLetterOf(p *chain.Prepared) string {
	var l chain.Letter
	if json.Unmarshal(p.Change, &l) == nil && l.PrevLetterID != nil {
		return *l.PrevLetterID
	}
	return ""
}

// prepareStoreGesture prepares a receipt import or a ratification.
func (s *Server) prepareStoreGesture(ctx context.Context, req gestureRequest, w brain.WriteRequest) (*pendingGesture, error) {
	if err := s.flows.CheckSound(ctx, brain.StoreRef); err != nil {
		return nil, err
	}
	var commit *chain.Prepared
	var binds []string
	if req.Gesture == rules.GestureReceiptImport {
		res, err := s.flows.ImportReceipt(ctx, brain.ImportRequest{WriteRequest: w, BlockID: req.BlockID, Receipt: req.Receipt, Origin: rules.OriginHumanPasskey, DryRun: true})
		if err != nil {
			return nil, err
		}
		commit = res.Prepared
		binds = []string{fmt.Sprintf("importing a receipt into %s at store v%d (on v%d, %.12s)", req.BlockID, res.StoreVersion, res.StoreVersion-1, commit.Parent)}
	} else {
		res, err := s.flows.Ratify(ctx, brain.RatifyRequest{WriteRequest: w, BlockIDs: req.BlockIDs, Origin: rules.OriginHumanPasskey, DryRun: true})
		if err != nil {
			return nil, err
		}
		commit = res.Prepared
		binds = []string{fmt.Sprintf("ratifying %s at store v%d (on v%d, %.12s)", rules.Count(len(res.Ratified), "block"), res.StoreVersion, res.StoreVersion-1, commit.Parent)}
	}
	return &pendingGesture{
		gesture: req.Gesture, commit: commit, binds: binds,
		done: func(_ context.Context, h gitstore.Hash) (any, error) {
			return s.storeReply(req, h)
		},
	}, nil
}

// storeReply answers a committed store gesture as the CLI verb would.
func (s *Server) storeReply(req gestureRequest, h gitstore.Hash) (any, error) {
	snap, _, err := s.flows.Snapshot()
	if err != nil {
		return nil, err
	}
	if req.Gesture == rules.GestureReceiptImport {
		n := 0
		if b := snap.Block(req.BlockID); b != nil {
			n = len(b.Receipts)
		}
		return &brain.ImportResult{StoreVersion: snap.StoreVersion, BlockID: req.BlockID, ReceiptCount: n, Commit: h.String()}, nil
	}
	var ratified []string
	if r := snap.Skeleton.Ratification; r != nil {
		ratified = r.BlockIDs
	}
	return &brain.RatifyResult{MutationResult: brain.MutationResult{StoreVersion: snap.StoreVersion, Changed: true, Commit: h.String()},
		Ratified: ratified, SkeletonState: snap.Skeleton.State}, nil
}

// gestureCommit is POST /api/gesture/commit: the id options handed out,
// and the browser's assertion over its challenge.
type gestureCommit struct {
	GestureID  string    `json:"gesture_id"`
	Credential assertion `json:"credential"`
}

// assertion is the browser's PublicKeyCredential answer to
// navigator.credentials.get, as JSON. Its other fields are declared so it
// decodes strictly; only the assertion is read.
type assertion struct {
	ID       string `json:"id"`
	Response struct {
		AuthenticatorData string `json:"authenticatorData"`
		ClientDataJSON    string `json:"clientDataJSON"`
		Signature         string `json:"signature"`
		UserHandle        string `json:"userHandle,omitempty"`
	} `json:"response"`
	Type                    string          `json:"type,omitempty"`
	RawID                   string          `json:"rawId,omitempty"`
	AuthenticatorAttachment string          `json:"authenticatorAttachment,omitempty"`
	ClientExtensionResults  json.RawMessage `json:"clientExtensionResults,omitempty"`
}

// proof is the assertion as the laws read one.
func (a *assertion) proof() *rules.Proof {
	return &rules.Proof{CredentialID: a.ID, AuthenticatorData: a.Response.AuthenticatorData,
		ClientDataJSON: a.Response.ClientDataJSON, Signature: a.Response.Signature}
}

// postGestureCommit writes a prepared gesture with its proof: the proof
// must be over that gesture's own challenge, and the commit is judged by
// the laws that judge it everywhere (a registered key, a user present,
// exactly the change prepared) before its ref moves.
func (s *Server) postGestureCommit(r *http.Request, body []byte) (any, error) {
	var req gestureCommit
	if err := decodeRequest(body, &req); err != nil {
		return nil, err
	}
	keys, err := s.flows.Keys()
	if err != nil {
		return nil, err
	}
	session, err := s.sessionOf(r, keys)
	if err != nil {
		return nil, err
	}
	p, ok := s.gestures.take(session, req.GestureID, s.now())
	if !ok {
		return nil, rules.Refusef(rules.HumanGestureRequired, "gesture_id", "this gesture was not prepared here for this session, expired or was used: ask for it again")
	}
	proof := req.Credential.proof()
	// The laws accept a proof from a tray on any localhost port; this tray
	// takes only one made on its own page, so no other local page can ask
	// the human's authenticator for a change this tray prepared.
	if origin, err := rules.ProofOrigin(proof); err != nil || origin != "http://"+rules.RelyingParty+":"+s.port {
		return nil, rules.Refusef(rules.HumanGestureRequired, "proof", "the passkey was asked on another page, not this tray (http://%s:%s)", rules.RelyingParty, s.port)
	}
	ctx := r.Context()
	if p.still != nil {
		if err := p.still(ctx); err != nil {
			return nil, err
		}
	}
	env, err := s.flows.Env()
	if err != nil {
		return nil, err
	}
	h, err := p.commit.Commit(ctx, rules.OriginHumanPasskey, proof, env)
	if errors.Is(err, chain.ErrLostRace) {
		return nil, movedRefusal(p.commit.Chain.Ref)
	}
	if err != nil {
		return nil, err
	}
	return p.done(ctx, h)
}

// movedRefusal is the refusal of a gesture whose ref moved while it waited
// for its signature: nothing was written.
func movedRefusal(ref string) error {
	if ref == brain.StoreRef {
		return rules.Refusef(rules.StoreVersionConflict, "expected_store_version", "the store moved while this gesture waited for its signature: nothing was written; look again and sign again")
	}
	return rules.Refusef(rules.StaleHead, "", "%s moved while this gesture waited for its signature: nothing was written; look again and sign again", ref)
}
