package tray

import (
	"context"
	"errors"
	"fmt"

	"github.com/m1nd/m1nd/brain"
	"github.com/m1nd/m1nd/chain"
	"github.com/m1nd/m1nd/gates"
	"github.com/m1nd/m1nd/gitstore"
)

// Adding a passkey to a brain that has one, or removing one, is the human
// gesture "keys", made like every other gesture (gesture.go): options
// prepare the next key set, whose canonical bytes the challenge binds; a
// key the brain already holds signs it; commit checks the proof with the
// law that will judge the keys commit (brain.KeysFollow) and appends it.
// An added key's registration is verified exactly as the first key's
// (verifyCreation), without a code: the signature is what proves it.

// keysChange is a prepared change of the key set.
type keysChange struct {
	parent  gitstore.Hash // the keys ref's head it builds on
	before  *brain.KeySet // the set at parent, whose keys may sign
	next    *brain.KeySet // the set to write
	subject string        // the commit's subject
	id      string        // the credential added or removed
}

// keysReply answers a written key change.
type keysReply struct {
	OK           bool   `json:"ok"`
	KeysVersion  int64  `json:"keys_version"`
	Keys         int    `json:"keys"`
	Added        string `json:"added,omitempty"`
	Removed      string `json:"removed,omitempty"`
	CredentialID string `json:"credential_id"`
}

// prepareKeys builds the next key set of a keys gesture: the registered
// set plus the credential of req.Credential (a navigator.credentials.create
// answer to /api/passkey/options), or without the key req.Remove names.
func (s *Server) prepareKeys(req gestureRequest) (*keysChange, error) {
	adding, removing := len(req.Credential) > 0 && string(req.Credential) != "null", req.Remove != ""
	if adding == removing {
		return nil, gates.Refusef(gates.InvalidLetter, "gesture", "a keys gesture carries either credential (a new passkey, from navigator.credentials.create) or remove (a registered credential id)")
	}
	head, _, err := s.Repo.ReadRef(brain.KeysRef)
	if err != nil {
		return nil, err
	}
	before, err := brain.ReadKeys(s.Repo, head)
	if err != nil {
		return nil, err
	}
	if before == nil || len(before.Keys) == 0 {
		return nil, gates.Refusef(gates.HumanGestureRequired, "proof", "register a passkey first (m1nd serve prints a one-time code), or make this gesture at a terminal")
	}
	next := &brain.KeySet{Schema: brain.KeysSchema, Version: before.Version + 1, Keys: []brain.Passkey{}}
	k := &keysChange{parent: head, before: before, next: next}
	if adding {
		key, err := s.verifyCreation(req.Label, req.Credential)
		if err != nil {
			return nil, err
		}
		if _, held := before.Key(key.CredentialID); held {
			return nil, gates.Refusef(gates.InvalidLetter, "credential", "this passkey is registered already: add one made by another authenticator")
		}
		next.Keys = append(append(next.Keys, before.Keys...), key)
		k.id, k.subject = key.CredentialID, fmt.Sprintf("keys v%d: add %s", next.Version, key.Label)
	} else {
		label := ""
		for _, p := range before.Keys {
			if p.CredentialID == req.Remove {
				label = p.Label
				continue
			}
			next.Keys = append(next.Keys, p)
		}
		if len(next.Keys) == len(before.Keys) {
			return nil, gates.Refusef(gates.InvalidLetter, "remove", "remove names a credential id this brain has not registered")
		}
		if len(next.Keys) == 0 {
			return nil, brain.ErrLastKey
		}
		k.id, k.subject = req.Remove, fmt.Sprintf("keys v%d: remove %s", next.Version, label)
	}
	if _, err := brain.DecodeKeySet(next.Canonical()); err != nil {
		return nil, err
	}
	return k, nil
}

// commitKeys writes a prepared key change with its proof, once the law
// that will judge the commit holds: a key of the set before, over exactly
// the set written. A lost race is stale_head, nothing written.
func (s *Server) commitKeys(ctx context.Context, k *keysChange, proof *gates.Proof) (any, error) {
	meta := chain.Commit{Agent: "owner", When: s.now().UTC(), Subject: k.subject, Trailers: []chain.Trailer{
		{Key: "M1nd-Agent", Value: "owner"},
		{Key: gates.OriginTrailer, Value: gates.OriginHumanPasskey},
		{Key: gates.ProofTrailer, Value: gates.EncodeProof(proof)},
	}}
	body := k.next.Canonical()
	if err := brain.KeysFollow(k.before, k.next, body, meta.Message()); err != nil {
		return nil, err
	}
	c := chain.Chain{Repo: s.Repo, Kind: brain.KeysKind, Ref: brain.KeysRef}
	_, err := c.Append(ctx, k.parent, body, meta)
	if errors.Is(err, chain.ErrLostRace) {
		return nil, gates.Refusef(gates.StaleHead, "", "the brain's passkeys changed while this change was being signed: reload the tray and make it again")
	}
	if err != nil {
		return nil, err
	}
	reply := keysReply{OK: true, KeysVersion: k.next.Version, Keys: len(k.next.Keys), CredentialID: k.id}
	if len(k.next.Keys) > len(k.before.Keys) {
		reply.Added = k.id
	} else {
		reply.Removed = k.id
	}
	return reply, nil
}
