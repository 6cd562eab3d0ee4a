package tray

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/m1nd/m1nd/brain"
	"github.com/m1nd/m1nd/gitstore"
	"github.com/m1nd/m1nd/rules"
)

// Adding a passkey to a brain that has one, or removing one, is the human
// gesture "keys", made like every other gesture (gesture.go): options
// prepare the next key set (brain.PrepareAddKey, brain.PrepareRemoveKey),
// whose canonical bytes the challenge binds; a key the brain already holds
// signs it; the commit is judged by the law of every keys commit
// (brain.KeysFollow). An added key is either made here (its registration
// verified exactly as the first key's, verifyCreation) or a teammate's
// enrolment request, made in their own tray and pasted here: the
// signature of a key this brain holds is what admits it.

// keysReply answers a written key change.
type keysReply struct {
	KeysVersion  int64  `json:"keys_version"`
	Keys         int    `json:"keys"`
	Added        string `json:"added,omitempty"`
	Removed      string `json:"removed,omitempty"`
	CredentialID string `json:"credential_id"`
}

// EnrolmentSchema names a teammate's request to have their passkey added.
const EnrolmentSchema = "m1nd-passkey-enrolment-v0"

// enrolment is a passkey made in a teammate's tray, to be added to the
// brain by someone who holds a key of it.
type enrolment struct {
	Schema string `json:"schema"`
	brain.Passkey
}

// prepareKeys prepares the next key set of a keys gesture: the registered
// set plus the credential of req.Credential (a navigator.credentials.create
// answer to /api/passkey/options) or of req.Enrol (a teammate's request),
// or without the key req.Remove names.
func (s *Server) prepareKeys(ctx context.Context, req gestureRequest) (*pendingGesture, error) {
	adding, enrolling, removing := len(req.Credential) > 0 && string(req.Credential) != "null", req.Enrol != "", req.Remove != ""
	if n := map[bool]int{true: 1}; n[adding]+n[enrolling]+n[removing] != 1 {
		return nil, rules.Refusef(rules.InvalidLetter, "gesture", "a keys gesture carries one of credential (a new passkey, from navigator.credentials.create), enrol (a teammate's enrolment request) or remove (a registered credential id)")
	}
	now := s.now()
	var change *brain.KeyChange
	var err error
	switch {
	case removing:
		change, err = s.flows.PrepareRemoveKey(ctx, req.Remove, now)
	case enrolling:
		var key brain.Passkey
		if key, err = decodeEnrolment(req.Enrol); err == nil {
			change, err = s.flows.PrepareAddKey(key, now)
		}
	default:
		var key brain.Passkey
		if key, err = s.verifyCreation(req.Label, req.Credential); err == nil {
			change, err = s.flows.PrepareAddKey(key, now)
		}
	}
	if err != nil {
		return nil, err
	}
	key := findKey(change)
	what := fmt.Sprintf("adding passkey %q (fingerprint %s)", key.Label, key.Fingerprint())
	if change.Removing {
		what = fmt.Sprintf("removing passkey %q (fingerprint %s): what it signed so far stands, nothing it signs after does", key.Label, key.Fingerprint())
	}
	return &pendingGesture{
		gesture: rules.GestureKeys, commit: change.Prepared, signers: change.Before.Keys,
		binds: []string{what, fmt.Sprintf("key set v%d, on v%d (%.12s), with %s", change.Next.Version, change.Before.Version, change.Prepared.Parent, rules.Count(len(change.Next.Keys), "passkey"))},
		done: func(context.Context, gitstore.Hash) (any, error) {
			reply := keysReply{KeysVersion: change.Next.Version, Keys: len(change.Next.Keys), CredentialID: change.Credential}
			if change.Removing {
				reply.Removed = change.Credential
			} else {
				reply.Added = change.Credential
			}
			return reply, nil
		},
	}, nil
}

// findKey is the passkey a change adds or removes.
func findKey(c *brain.KeyChange) brain.Passkey {
	for _, set := range []*brain.KeySet{c.Next, c.Before} {
		for _, p := range set.Keys {
			if p.CredentialID == c.Credential {
				return p
			}
		}
	}
	return brain.Passkey{CredentialID: c.Credential, Label: c.Label}
}

// decodeEnrolment reads a teammate's enrolment request: base64url of its
// JSON, one key that a key set could hold.
func decodeEnrolment(code string) (brain.Passkey, error) {
	bad := rules.Refusef(rules.InvalidLetter, "enrol", "an enrolment request is the text a teammate's tray made (\"request enrolment\"), pasted whole")
	data, err := base64.RawURLEncoding.DecodeString(code)
	if err != nil || len(data) > 8<<10 {
		return brain.Passkey{}, bad
	}
	var e enrolment
	if err := decodeRequest(data, &e); err != nil || e.Schema != EnrolmentSchema {
		return brain.Passkey{}, bad
	}
	set := &brain.KeySet{Schema: brain.KeysSchema, Version: 1, Keys: []brain.Passkey{e.Passkey}}
	if _, err := brain.DecodeKeySet(set.Canonical()); err != nil {
		return brain.Passkey{}, err
	}
	return e.Passkey, nil
}

// postEnrolment is POST /api/passkey/enrolment: a passkey made here, in a
// clone whose brain has keys this machine's authenticator does not hold,
// turned into a request a teammate who holds one pastes into their tray.
// Nothing is written: their signature is what adds it.
func (s *Server) postEnrolment(r *http.Request, body []byte) (any, error) {
	var req struct {
		Label      string          `json:"label"`
		Credential json.RawMessage `json:"credential"`
	}
	if err := decodeRequest(body, &req); err != nil {
		return nil, err
	}
	key, err := s.verifyCreation(req.Label, req.Credential)
	if err != nil {
		return nil, err
	}
	data, _ := json.Marshal(enrolment{Schema: EnrolmentSchema, Passkey: key})
	return map[string]any{"enrolment": base64.RawURLEncoding.EncodeToString(data), "label": key.Label, "fingerprint": key.Fingerprint()}, nil
}
