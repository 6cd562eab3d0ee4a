package tray

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"crypto/subtle"
	"crypto/x509"
	"encoding/base32"
	"encoding/base64"
	"encoding/json"
	"errors"
	"math/big"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/go-webauthn/webauthn/protocol"
	"github.com/go-webauthn/webauthn/protocol/webauthncose"

	"github.com/m1nd/m1nd/brain"
	"github.com/m1nd/m1nd/internal/loopback"
	"github.com/m1nd/m1nd/rules"
)

// The owner's first passkey is registered in the tray with a one-time code
// that `m1nd serve` prints on its terminal: the code lives in this
// process's memory only (never a file, never a ref), works once, and only
// while the brain has no registered key. Adding a key to a registered
// brain, or removing one, is itself a proven gesture (gesture "keys",
// keys.go): signed by a key the brain already holds.

// registration is the owner's one-time code, guarded by mu.
type registration struct {
	mu   sync.Mutex
	code string // canonical (upper case, no dash); "" when none was offered
	used bool   // consumed by a registration that wrote the key set
	busy bool   // a registration holding the code is under way
}

var codeEncoding = base32.StdEncoding.WithPadding(base32.NoPadding)

// OfferRegistration makes the one-time code that registers the brain's
// first passkey, when this owner writes and the brain has no registered
// key; it returns the code as the operator types it (XXXX-XXXX), or ""
// when there is nothing to register. Call it once, before Serve.
func (s *Server) OfferRegistration() (string, error) {
	if s.ReadOnly {
		return "", nil
	}
	keys, err := s.flows.Keys()
	if err != nil {
		return "", err
	}
	if keys != nil && len(keys.Keys) > 0 {
		return "", nil
	}
	raw := make([]byte, 5) // 40 bits: 8 base32 characters
	if _, err := rand.Read(raw); err != nil {
		return "", err
	}
	code := codeEncoding.EncodeToString(raw)
	s.reg.mu.Lock()
	s.reg.code, s.reg.used = code, false
	s.reg.mu.Unlock()
	return code[:4] + "-" + code[4:], nil
}

// canonicalCode is a typed code as the owner keeps it: upper case, without
// the dash or spaces a human may type.
func canonicalCode(typed string) string {
	return strings.ToUpper(strings.NewReplacer("-", "", " ", "").Replace(typed))
}

var errKeyRegistered = rules.Refusef(rules.HumanGestureRequired, "code", "this brain has a registered passkey, so a code registers nothing: press \"add another passkey\" in the tray and sign the change with a registered one")

type passkeysReply struct {
	Registered bool          `json:"registered"`
	Keys       []passkeyView `json:"keys"`
	// SetFingerprint is the first key set's: it names the brain's keys to
	// a remote's admin (--trust-key) and a newcomer (sync --trust).
	SetFingerprint string `json:"set_fingerprint,omitempty"`
	// Registration says whether this owner takes a one-time code now.
	Registration bool `json:"registration"`
}

type passkeyView struct {
	CredentialID string `json:"credential_id"`
	Label        string `json:"label"`
	AddedAt      string `json:"added_at"`
	Fingerprint  string `json:"fingerprint"`
}

// getPasskeys answers which passkeys the brain has registered: public
// ids, labels and dates only.
func (s *Server) getPasskeys(w http.ResponseWriter, r *http.Request) {
	keys, err := s.flows.Keys()
	if err != nil {
		loopback.WriteErr(w, err)
		return
	}
	reply := passkeysReply{Keys: []passkeyView{}}
	if keys != nil {
		for _, k := range keys.Keys {
			reply.Keys = append(reply.Keys, passkeyView{CredentialID: k.CredentialID, Label: k.Label, AddedAt: k.AddedAt, Fingerprint: k.Fingerprint()})
		}
	}
	reply.Registered = len(reply.Keys) > 0
	if first, err := s.flows.FirstKeySet(); err == nil && first != nil {
		reply.SetFingerprint = first.Fingerprint()
	}
	s.reg.mu.Lock()
	reply.Registration = !reply.Registered && s.reg.code != "" && !s.reg.used && !s.ReadOnly
	s.reg.mu.Unlock()
	loopback.WriteJSON(w, http.StatusOK, reply)
}

// credParams are the algorithms m1nd verifies a proof with
// (rules.VerifyProof): ES256, EdDSA, RS256.
var credParams = []protocol.CredentialParameter{
	{Type: protocol.PublicKeyCredentialType, Algorithm: webauthncose.AlgES256},
	{Type: protocol.PublicKeyCredentialType, Algorithm: webauthncose.AlgEdDSA},
	{Type: protocol.PublicKeyCredentialType, Algorithm: webauthncose.AlgRS256},
}

// postPasskeyOptions answers the PublicKeyCredentialCreationOptions the
// page hands to navigator.credentials.create: a fresh challenge, good for
// challengeTTL and kept nowhere (sessions.challenge), so a flood of
// options crowds out no one's. On a brain with keys the new
// credential is added by the signed gesture "keys" (keys.go). No
// credential is excluded: an authenticator may hold a second passkey of
// the brain (the owner's choice); the gesture refuses only a credential
// registered already.
func (s *Server) postPasskeyOptions(r *http.Request, body []byte) (any, error) {
	var req struct{}
	if len(strings.TrimSpace(string(body))) > 0 {
		if err := decodeRequest(body, &req); err != nil {
			return nil, err
		}
	}
	raw, err := s.logins.challenge("create", s.port, s.now())
	if err != nil {
		return nil, err
	}
	challenge := protocol.URLEncodedBase64(raw)
	handle := make([]byte, 16)
	if _, err := rand.Read(handle); err != nil {
		return nil, err
	}
	name := "m1nd " + s.flows.Name()
	return map[string]any{"publicKey": protocol.PublicKeyCredentialCreationOptions{
		RelyingParty: protocol.RelyingPartyEntity{ID: rules.RelyingParty, CredentialEntity: protocol.CredentialEntity{Name: name}},
		User: protocol.UserEntity{
			ID:               protocol.URLEncodedBase64(handle),
			DisplayName:      "owner of " + name,
			CredentialEntity: protocol.CredentialEntity{Name: "owner"},
		},
		Challenge:              challenge,
		Parameters:             credParams,
		Timeout:                int(challengeTTL / time.Millisecond),
		AuthenticatorSelection: protocol.AuthenticatorSelection{UserVerification: protocol.VerificationPreferred},
		Attestation:            protocol.PreferNoAttestation,
	}}, nil
}

type registerRequest struct {
	Code       string          `json:"code"`
	Label      string          `json:"label"`
	Credential json.RawMessage `json:"credential"`
}

type registerReply struct {
	CredentialID string `json:"credential_id"`
	KeysVersion  int64  `json:"keys_version"`
}

func codeRefusal(format string, args ...any) error {
	return rules.Refusef(rules.HumanGestureRequired, "code", format, args...)
}

// postPasskeyRegister registers the brain's first passkey: the one-time
// code is checked first, before the request is parsed; then the browser's
// attestation is verified against a challenge this owner handed out, for
// relying party localhost and this tray's origin, with the user present;
// the credential's public key is written as key set version 1.
func (s *Server) postPasskeyRegister(r *http.Request, body []byte) (any, error) {
	keys, err := s.flows.Keys()
	if err != nil {
		return nil, err
	}
	if keys != nil && len(keys.Keys) > 0 {
		return nil, errKeyRegistered
	}
	if err := s.reg.hold(canonicalCode(peekString(body, "code"))); err != nil {
		return nil, err
	}
	reply, err := s.register(r.Context(), body)
	s.reg.release(err == nil)
	return reply, err
}

// hold takes the one-time code for one registration: a wrong, used or busy
// code is refused. release gives it back, or burns it once used.
func (g *registration) hold(typed string) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	switch {
	case g.code == "":
		return codeRefusal("this owner offers no registration code: restart `m1nd serve` on a brain with no registered passkey and type the code it prints")
	case g.used:
		return codeRefusal("the registration code was used already: it works once; restart `m1nd serve` for a new one")
	case subtle.ConstantTimeCompare([]byte(typed), []byte(g.code)) != 1:
		return codeRefusal("that is not the registration code `m1nd serve` printed on its terminal")
	case g.busy:
		return codeRefusal("a registration with this code is under way")
	}
	g.busy = true
	return nil
}

func (g *registration) release(used bool) {
	g.mu.Lock()
	g.busy = false
	g.used = g.used || used
	g.mu.Unlock()
}

// register verifies the attestation in body and writes key set 1.
func (s *Server) register(ctx context.Context, body []byte) (any, error) {
	var req registerRequest
	if err := decodeRequest(body, &req); err != nil {
		return nil, err
	}
	key, err := s.verifyCreation(req.Label, req.Credential)
	if err != nil {
		return nil, err
	}
	set, err := s.flows.RegisterFirstKey(ctx, key, s.now())
	if errors.Is(err, brain.ErrKeyRaced) {
		return nil, rules.Refusef(rules.StaleHead, "", "a passkey was registered while this one was being made: reload the tray")
	}
	if err != nil {
		return nil, err
	}
	return registerReply{CredentialID: key.CredentialID, KeysVersion: set.Version}, nil
}

// verifyCreation verifies the browser's answer to navigator.credentials.create
// (credential), for the first key and for every key added after it: a
// challenge this owner handed out, relying party localhost, this tray's
// origin, the user present; it returns the key as the key set stores it.
func (s *Server) verifyCreation(label string, credential json.RawMessage) (brain.Passkey, error) {
	var none brain.Passkey
	label = strings.Join(strings.Fields(label), " ")
	if label == "" {
		label = "passkey"
	}
	if len(label) > 100 || rules.HasUnsafeText(label) {
		return none, rules.Refusef(rules.InvalidLetter, "label", "a passkey's label is short plain text (at most 100 bytes)")
	}
	if len(credential) == 0 || string(credential) == "null" {
		return none, rules.Refusef(rules.InvalidLetter, "credential", "credential is the browser's answer to navigator.credentials.create, as JSON")
	}
	parsed, err := protocol.ParseCredentialCreationResponseBytes(credential)
	if err != nil {
		return none, rules.Refusef(rules.InvalidLetter, "credential", "the credential is not a WebAuthn registration response: %s", rules.Clip(webauthnError(err)))
	}
	challenge := parsed.Response.CollectedClientData.Challenge
	if raw, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(challenge, "=")); err != nil || !s.logins.fresh("create", s.port, raw, s.now()) {
		return none, rules.Refusef(rules.HumanGestureRequired, "credential", "the passkey answered a challenge this owner did not hand out, or one that expired: ask for new options and try again")
	}
	origin := "http://" + rules.RelyingParty + ":" + s.port
	if _, err := parsed.Verify(challenge, rules.RelyingParty, []string{origin}, nil, nil, protocol.TopOriginImplicitVerificationMode,
		false, false, true, nil, credParams, protocol.AttestationPolicy{}, protocol.SignaturePolicy{}); err != nil {
		return none, rules.Refusef(rules.HumanGestureRequired, "credential", "the passkey's registration does not hold (it must be made in the tray at %s, with a user present): %s", origin, rules.Clip(webauthnError(err)))
	}
	att := parsed.Response.AttestationObject.AuthData.AttData
	der, err := pkixOf(att.CredentialPublicKey)
	if err != nil {
		return none, rules.Refusef(rules.InvalidLetter, "credential", "the passkey's public key is not one m1nd verifies with (ES256, EdDSA or RS256): %s", rules.Clip(webauthnError(err)))
	}
	return brain.Passkey{
		CredentialID: base64.RawURLEncoding.EncodeToString(att.CredentialID), PublicKey: base64.RawURLEncoding.EncodeToString(der),
		Label: label, AddedAt: s.now().UTC().Format(time.RFC3339),
	}, nil
}

// pkixOf converts a credential's COSE public key to PKIX DER, the form
// the key set stores and rules.VerifyProof reads.
func pkixOf(cose []byte) ([]byte, error) {
	key, err := webauthncose.ParsePublicKey(cose)
	if err != nil {
		return nil, err
	}
	var pub any
	switch k := key.(type) {
	case webauthncose.EC2PublicKeyData:
		if webauthncose.COSEAlgorithmIdentifier(k.Algorithm) != webauthncose.AlgES256 {
			return nil, errors.New("an EC2 key that is not ES256")
		}
		if pub, err = k.ToECDSA(); err != nil {
			return nil, err
		}
	case webauthncose.OKPPublicKeyData:
		pub = ed25519.PublicKey(k.XCoord)
	case webauthncose.RSAPublicKeyData:
		if webauthncose.COSEAlgorithmIdentifier(k.Algorithm) != webauthncose.AlgRS256 {
			return nil, errors.New("an RSA key that is not RS256")
		}
		e, err := webauthncose.ParseRSAPublicKeyDataExponent(&k)
		if err != nil {
			return nil, err
		}
		pub = &rsa.PublicKey{N: new(big.Int).SetBytes(k.Modulus), E: e}
	default:
		return nil, errors.New("a key type m1nd does not verify")
	}
	return x509.MarshalPKIXPublicKey(pub)
}

// webauthnError is the readable part of a go-webauthn error.
func webauthnError(err error) string {
	var pe *protocol.Error
	if errors.As(err, &pe) {
		if pe.DevInfo != "" {
			return pe.Details + ": " + pe.DevInfo
		}
		return pe.Details
	}
	return err.Error()
}
