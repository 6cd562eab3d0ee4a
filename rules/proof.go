package rules

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
)

// A human gesture is proven by a WebAuthn assertion (a passkey) made in
// the tray with user presence, over a challenge that binds the exact change
// the gesture writes. The proof is recorded with the commit it proves and
// checked, with the same code, by every verifier: post, the tray, the git
// hooks (local and a remote's), sync and verify.

// RelyingParty is the WebAuthn relying-party id of every tray: browsers
// refuse an IP address there, so the tray is http://localhost:PORT.
const RelyingParty = "localhost"

// Proof is one WebAuthn assertion, each part base64url without padding as
// the browser hands it over.
type Proof struct {
	CredentialID      string `json:"credential_id"`
	AuthenticatorData string `json:"authenticator_data"`
	ClientDataJSON    string `json:"client_data_json"`
	Signature         string `json:"signature"`
}

// ProofTrailer is the commit trailer that carries a proof.
const ProofTrailer = "M1nd-Proof"

// GestureChallenge is the challenge a gesture's assertion signs: the
// sha256 of the gesture's kind and the exact bytes it binds (a letter's
// canonical bytes, a store commit's tree and parent, a key set), so an
// assertion proves that one change and no other.
func GestureChallenge(gesture string, change []byte) []byte {
	h := sha256.New()
	h.Write([]byte("m1nd-gesture-v0\x00"))
	h.Write([]byte(gesture))
	h.Write([]byte{0})
	h.Write(change)
	return h.Sum(nil)
}

// PublicKey is a registered passkey: its credential id and its public key
// as PKIX DER (what x509.MarshalPKIXPublicKey makes of the authenticator's
// COSE key at registration), both base64url.
type PublicKey struct {
	CredentialID string `json:"credential_id"`
	PKIX         string `json:"public_key"`
}

var b64 = base64.RawURLEncoding

// badProof is the refusal of a proof that does not hold.
func badProof(format string, args ...any) error {
	return Refusef(HumanGestureRequired, "proof", "the passkey proof does not hold: "+format, args...)
}

// VerifyProof checks that p is an assertion by key over challenge: the
// client data is a webauthn.get from a tray on localhost carrying exactly
// this challenge, the authenticator data names the relying party and says
// a user was present, and the signature verifies. Any failure is refused
// human_gesture_required.
func VerifyProof(p *Proof, key PublicKey, challenge []byte) error {
	if p == nil {
		return badProof("there is none")
	}
	if p.CredentialID != key.CredentialID {
		return badProof("it was made by another credential")
	}
	authData, err1 := b64.DecodeString(p.AuthenticatorData)
	clientData, err2 := b64.DecodeString(p.ClientDataJSON)
	sig, err3 := b64.DecodeString(p.Signature)
	if err := errors.Join(err1, err2, err3); err != nil {
		return badProof("a part is not base64url")
	}
	var cd struct {
		Type      string `json:"type"`
		Challenge string `json:"challenge"`
		Origin    string `json:"origin"`
	}
	if err := json.Unmarshal(clientData, &cd); err != nil {
		return badProof("the client data is not JSON")
	}
	if cd.Type != "webauthn.get" {
		return badProof("the client data is a %s, not an assertion", Echo(cd.Type))
	}
	if got, err := b64.DecodeString(strings.TrimRight(cd.Challenge, "=")); err != nil || !bytes.Equal(got, challenge) {
		return badProof("it signs another change")
	}
	if !trayOrigin(cd.Origin) {
		return badProof("it was made on %s, not a tray on %s", Echo(cd.Origin), RelyingParty)
	}
	if len(authData) < 37 {
		return badProof("the authenticator data is short")
	}
	if rp := sha256.Sum256([]byte(RelyingParty)); !bytes.Equal(authData[:32], rp[:]) {
		return badProof("the authenticator signed for another site")
	}
	if authData[32]&0x01 == 0 {
		return badProof("no user was present")
	}
	cdHash := sha256.Sum256(clientData)
	signed := append(append([]byte{}, authData...), cdHash[:]...)
	der, err := b64.DecodeString(key.PKIX)
	if err != nil {
		return badProof("the registered key does not decode")
	}
	pub, err := ParsePublicKey(der)
	if err != nil {
		return badProof("the registered key does not decode")
	}
	digest := sha256.Sum256(signed)
	ok := false
	switch k := pub.(type) {
	case *ecdsa.PublicKey:
		ok = ecdsa.VerifyASN1(k, digest[:], sig)
	case ed25519.PublicKey:
		ok = ed25519.Verify(k, signed, sig)
	case *rsa.PublicKey:
		ok = rsa.VerifyPKCS1v15(k, crypto.SHA256, digest[:], sig) == nil
	default:
		return badProof("the registered key is of an algorithm m1nd does not verify")
	}
	if !ok {
		return badProof("the signature does not verify")
	}
	return nil
}

// ProofOrigin is the page a proof was made on, as its client data says.
// The laws accept any tray on localhost (they cannot know its port); the
// tray that asked for a proof holds it to its own origin.
func ProofOrigin(p *Proof) (string, error) {
	data, err := b64.DecodeString(p.ClientDataJSON)
	var cd struct {
		Origin string `json:"origin"`
	}
	if err != nil || json.Unmarshal(data, &cd) != nil {
		return "", badProof("the client data does not decode")
	}
	return cd.Origin, nil
}

// ProofChallenge is the challenge a proof's client data says it signs;
// VerifyProof checks it against the one expected.
func ProofChallenge(p *Proof) ([]byte, error) {
	data, err := b64.DecodeString(p.ClientDataJSON)
	var cd struct {
		Challenge string `json:"challenge"`
	}
	if err != nil || json.Unmarshal(data, &cd) != nil {
		return nil, badProof("the client data does not decode")
	}
	c, err := b64.DecodeString(strings.TrimRight(cd.Challenge, "="))
	if err != nil {
		return nil, badProof("the client data's challenge is not base64url")
	}
	return c, nil
}

// trayOrigin reports whether origin is a tray's: http://localhost, any port.
func trayOrigin(origin string) bool {
	rest, ok := strings.CutPrefix(origin, "http://"+RelyingParty)
	if !ok {
		return false
	}
	if rest == "" {
		return true
	}
	port, ok := strings.CutPrefix(rest, ":")
	if !ok || port == "" || port[0] == '0' || strings.Trim(port, "0123456789") != "" {
		return false // an origin is serialised: no path, no query, a port in digits
	}
	n, err := strconv.Atoi(port)
	return err == nil && n < 65536
}

// EncodeProof is a proof as its commit trailer's value: base64url of its
// compact JSON, one line.
func EncodeProof(p *Proof) string {
	data, _ := json.Marshal(p)
	return b64.EncodeToString(data)
}

// DecodeProof reads a trailer's value; a malformed one is refused.
func DecodeProof(value string) (*Proof, error) {
	data, err := b64.DecodeString(strings.TrimSpace(value))
	if err != nil || len(data) > 16<<10 {
		return nil, badProof("its trailer is not one")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	p := &Proof{}
	if err := dec.Decode(p); err != nil || p.CredentialID == "" {
		return nil, badProof("its trailer is not one")
	}
	return p, nil
}
