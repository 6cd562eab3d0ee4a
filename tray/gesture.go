package tray

import (
	"encoding/base64"
	"encoding/json"
	"net/http"

	"github.com/m1nd/m1nd/brain"
	"github.com/m1nd/m1nd/chain"
	"github.com/m1nd/m1nd/gates"
	"github.com/m1nd/m1nd/ops"
)

// A human gesture in the tray is signed by the brain's registered passkey:
// the page asks for options, the owner prepares the exact change the
// gesture would write (the archived letter's bytes; the store's parent and
// the tree of the new snapshot) and hands out its challenge, the browser's
// authenticator signs it with the user present, and the commit is written
// with the proof on it — checked here and by every law that reads it. The
// API never takes a gesture's origin from a request body.

// GestureLand is the tray's landing (ops.Land): the receipt import its
// proof signs, the merge and the landed letter.
const GestureLand = "land"

// landDone answers the options of a landing that needs no signature: an
// earlier one imported the receipt and was cut short, and this finished it.
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
	// /api/passkey/options) and its label, or the credential id to remove.
	Credential json.RawMessage `json:"credential,omitempty"`
	Label      string          `json:"label,omitempty"`
	Remove     string          `json:"remove,omitempty"`
}

// pendingGesture is a prepared gesture waiting for its signature: what
// is replayed, with the proof, once the assertion comes back.
type pendingGesture struct {
	req    gestureRequest
	write  brain.WriteRequest // store gestures: the same version, writer and time
	letter []byte             // archive: the letter's canonical bytes
	land   *ops.LandRequest   // land: the landing, replayed with its proof
	keys   *keysChange        // keys: the key set before and after
}

// gestureOptions is the reply to options: what navigator.credentials.get
// takes, its binary fields base64url.
type gestureOptions struct {
	OK        bool `json:"ok"`
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
// Nothing is committed: the store gesture's objects are written but no
// ref points at them until the signed gesture comes back.
func (s *Server) postGestureOptions(r *http.Request, body []byte) (any, error) {
	// The gate comes before the input is parsed (DESIGN §7).
	keys, err := s.Store.Keys()
	if err != nil {
		return nil, err
	}
	if keys == nil || len(keys.Keys) == 0 {
		return nil, gates.Refusef(gates.HumanGestureRequired, "proof", "register a passkey first (m1nd serve prints a one-time code), or make this gesture at a terminal")
	}
	var req gestureRequest
	if err := decodeRequest(body, &req); err != nil {
		return nil, err
	}
	now := s.now()
	p := &pendingGesture{req: req}
	var change []byte
	switch req.Gesture {
	case brain.GestureReceiptImport, brain.GestureRatify:
		if p.write, err = s.writeRequest(req.ExpectedStoreVersion, req.AgentID, "agent_id"); err != nil {
			return nil, err
		}
		if _, change, err = s.storeGesture(r, p, nil, true); err != nil {
			return nil, err
		}
	case brain.GestureArchive:
		agent, err := agentOrOwner(req.AgentID, "agent_id")
		if err != nil {
			return nil, err
		}
		letter, err := s.Missions.ArchiveLetter(req.MissionID, now)
		if err != nil {
			return nil, err
		}
		p.req.AgentID, p.letter, change = agent, letter, letter
	case GestureLand:
		agent, err := agentOrOwner(req.AgentID, "agent_id")
		if err != nil {
			return nil, err
		}
		land := ops.LandRequest{MissionID: req.MissionID, Into: req.Into, Agent: agent, Origin: gates.OriginHumanPasskey, DryRun: true, Now: now}
		plan, err := s.Land(r.Context(), land)
		if err != nil {
			return nil, err
		}
		land.DryRun = false
		if !plan.NeedsGesture {
			// The store already holds the human's import (a landing cut
			// short): what is left needs no second gesture.
			res, err := s.Land(r.Context(), land)
			if err != nil {
				return nil, err
			}
			return landDone{Done: true, LandResult: res}, nil
		}
		land.ExpectedStoreVersion = plan.StoreVersion - 1
		// The proof is the import's: the store's law checks it by that name.
		p.land, change, req.Gesture = &land, plan.Change, brain.GestureReceiptImport
	case brain.KeysGesture:
		if p.keys, err = s.prepareKeys(req); err != nil {
			return nil, err
		}
		keys, change = p.keys.before, p.keys.next.Canonical()
	default:
		return nil, gates.Refusef(gates.InvalidLetter, "gesture", "gesture is land, receipt_import, ratify, archive or keys")
	}
	challenge := base64.RawURLEncoding.EncodeToString(gates.GestureChallenge(req.Gesture, change))
	s.gestures.put(challenge, p, now)
	reply := gestureOptions{OK: true}
	reply.PublicKey.Challenge = challenge
	reply.PublicKey.RPID = gates.RelyingParty
	reply.PublicKey.UserVerification = "preferred"
	reply.PublicKey.Timeout = challengeTTL.Milliseconds()
	for _, k := range keys.Keys {
		reply.PublicKey.AllowCredentials = append(reply.PublicKey.AllowCredentials, allowedCredential{Type: "public-key", ID: k.CredentialID})
	}
	return reply, nil
}

// storeGesture runs a store gesture: prepared only (dry), returning the
// change its proof binds, or written with its proof, returning the reply.
func (s *Server) storeGesture(r *http.Request, p *pendingGesture, proof *gates.Proof, dry bool) (reply any, change []byte, err error) {
	origin := gates.OriginHumanPasskey
	if p.req.Gesture == brain.GestureReceiptImport {
		res, err := s.Store.ImportReceipt(r.Context(), brain.ImportRequest{WriteRequest: p.write, BlockID: p.req.BlockID, Receipt: p.req.Receipt, Origin: origin, Proof: proof, DryRun: dry})
		if err != nil {
			return nil, nil, err
		}
		return res, res.Change, nil
	}
	res, err := s.Store.Ratify(r.Context(), brain.RatifyRequest{WriteRequest: p.write, BlockIDs: p.req.BlockIDs, Origin: origin, Proof: proof, DryRun: dry})
	if err != nil {
		return nil, nil, err
	}
	return res, res.Change, nil
}

// gestureCommit is POST /api/gesture/commit: the challenge options handed
// out, and the browser's assertion over it. The credential's other fields
// are declared so the browser's whole PublicKeyCredential JSON decodes
// strictly; only the assertion is read.
type gestureCommit struct {
	Challenge  string `json:"challenge"`
	Credential struct {
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
	} `json:"credential"`
}

// postGestureCommit writes a prepared gesture with its proof. The proof is
// checked by the same law that will judge the commit (brain.CheckGesture):
// over exactly the change prepared, by a registered key, a user present.
func (s *Server) postGestureCommit(r *http.Request, body []byte) (any, error) {
	var req gestureCommit
	if err := decodeRequest(body, &req); err != nil {
		return nil, err
	}
	p, ok := s.gestures.take(req.Challenge, s.now())
	if !ok {
		return nil, gates.Refusef(gates.HumanGestureRequired, "challenge", "this challenge was not handed out here, expired or was used: ask for the gesture again")
	}
	proof := &gates.Proof{
		CredentialID:      req.Credential.ID,
		AuthenticatorData: req.Credential.Response.AuthenticatorData,
		ClientDataJSON:    req.Credential.Response.ClientDataJSON,
		Signature:         req.Credential.Response.Signature,
	}
	// The laws accept a proof from a tray on any localhost port; this tray
	// takes only one made on its own page, so no other local page can ask
	// the human's authenticator for a change this tray prepared.
	if origin, err := gates.ProofOrigin(proof); err != nil || origin != "http://"+gates.RelyingParty+":"+s.port {
		return nil, gates.Refusef(gates.HumanGestureRequired, "proof", "the passkey was asked on another page, not this tray (http://%s:%s)", gates.RelyingParty, s.port)
	}
	if p.req.Gesture == brain.KeysGesture {
		return s.commitKeys(r.Context(), p.keys, proof)
	}
	if p.land != nil {
		land := *p.land
		land.Proof = proof
		return s.Land(r.Context(), land)
	}
	if p.req.Gesture == brain.GestureArchive {
		return s.Missions.Post(r.Context(), chain.PostRequest{Body: p.letter, Agent: p.req.AgentID, Origin: gates.OriginHumanPasskey, Proof: proof})
	}
	reply, _, err := s.storeGesture(r, p, proof, false)
	return reply, err
}
