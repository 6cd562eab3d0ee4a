package rules_test

import (
	"crypto/sha256"
	"encoding/base64"
	"testing"

	"github.com/m1nd/m1nd/rules"
	"github.com/m1nd/m1nd/rules/rulestest"
)

func TestVerifyProof(t *testing.T) {
	change := rules.GestureChallenge("archive", []byte(`{"letter":1}`))
	for _, alg := range []string{"es256", "ed25519", "rs256"} {
		a := rulestest.New(t, alg)
		other := rulestest.New(t, alg)
		for _, tt := range []struct {
			label string
			proof *rules.Proof
			key   rules.PublicKey
			ok    bool
		}{
			{"a proof of this change", a.Assert(change, nil), a.Key, true},
			{"any localhost port", a.Assert(change, func(cd map[string]any, ad []byte) []byte { cd["origin"] = "http://localhost:1"; return ad }), a.Key, true},
			{"another change", a.Assert(rules.GestureChallenge("archive", []byte(`{"letter":2}`)), nil), a.Key, false},
			{"another gesture over the same bytes", a.Assert(rules.GestureChallenge("ratify", []byte(`{"letter":1}`)), nil), a.Key, false},
			{"another key", other.Assert(change, nil), a.Key, false},
			{"made by another credential, claimed as this one", func() *rules.Proof { p := other.Assert(change, nil); p.CredentialID = a.ID; return p }(), a.Key, false},
			{"a registration, not an assertion", a.Assert(change, func(cd map[string]any, ad []byte) []byte { cd["type"] = "webauthn.create"; return ad }), a.Key, false},
			{"another site", a.Assert(change, func(cd map[string]any, ad []byte) []byte { cd["origin"] = "https://evil.example"; return ad }), a.Key, false},
			{"127.0.0.1 is no relying party", a.Assert(change, func(cd map[string]any, ad []byte) []byte { cd["origin"] = "http://127.0.0.1:7420"; return ad }), a.Key, false},
			{"signed for another relying party", a.Assert(change, func(_ map[string]any, ad []byte) []byte {
				rp := sha256.Sum256([]byte("evil.example"))
				return append(rp[:], ad[32:]...)
			}), a.Key, false},
			{"no user present", a.Assert(change, func(_ map[string]any, ad []byte) []byte { ad[32] = 0x04; return ad }), a.Key, false},
			{"short authenticator data", a.Assert(change, func(_ map[string]any, ad []byte) []byte { return ad[:33] }), a.Key, false},
			{"a tampered signature", func() *rules.Proof {
				p := a.Assert(change, nil)
				sig, _ := base64.RawURLEncoding.DecodeString(p.Signature)
				sig[len(sig)-1] ^= 1
				p.Signature = base64.RawURLEncoding.EncodeToString(sig)
				return p
			}(), a.Key, false},
			{"tampered client data", func() *rules.Proof {
				p := a.Assert(change, nil)
				cd, _ := base64.RawURLEncoding.DecodeString(p.ClientDataJSON)
				p.ClientDataJSON = base64.RawURLEncoding.EncodeToString(append(cd[:len(cd)-1], []byte(`,"x":1}`)...))
				return p
			}(), a.Key, false},
			{"not base64url", &rules.Proof{CredentialID: a.ID, AuthenticatorData: "***", ClientDataJSON: "e30", Signature: "AA"}, a.Key, false},
			{"no proof", nil, a.Key, false},
		} {
			err := rules.VerifyProof(tt.proof, tt.key, change)
			switch {
			case tt.ok && err != nil:
				t.Errorf("%s, %s: refused: %v", alg, tt.label, err)
			case !tt.ok && err == nil:
				t.Errorf("%s, %s: verified", alg, tt.label)
			case !tt.ok:
				if r, ok := rules.AsRefusal(err); !ok || r.Code != rules.HumanGestureRequired || r.Field != "proof" {
					t.Errorf("%s, %s: %v, want human_gesture_required on proof", alg, tt.label, err)
				}
			}
		}
	}
}

func TestProofTrailerRoundTrip(t *testing.T) {
	a := rulestest.New(t, "es256")
	change := rules.GestureChallenge("ratify", []byte("x"))
	p := a.Assert(change, nil)
	got, err := rules.DecodeProof(rules.EncodeProof(p))
	if err != nil || *got != *p {
		t.Fatalf("round trip: %+v %v", got, err)
	}
	if err := rules.VerifyProof(got, a.Key, change); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"", "!!", base64.RawURLEncoding.EncodeToString([]byte(`{"credential_id":"x","extra":1}`)), base64.RawURLEncoding.EncodeToString([]byte(`{}`)), base64.RawURLEncoding.EncodeToString([]byte(`[1]`))} {
		if _, err := rules.DecodeProof(bad); err == nil {
			t.Errorf("rules.DecodeProof(%q) accepted", bad)
		}
	}
}

func FuzzDecodeProof(f *testing.F) {
	f.Add(rules.EncodeProof(&rules.Proof{CredentialID: "a", AuthenticatorData: "b", ClientDataJSON: "c", Signature: "d"}))
	f.Add("e30")
	f.Fuzz(func(t *testing.T, value string) {
		p, err := rules.DecodeProof(value)
		if err != nil {
			return
		}
		// Whatever decodes re-encodes to a proof that decodes the same,
		// and verifies against nothing it was not made for.
		again, err := rules.DecodeProof(rules.EncodeProof(p))
		if err != nil || *again != *p {
			t.Fatalf("round trip of %q: %+v %v", value, again, err)
		}
		if rules.VerifyProof(p, rules.PublicKey{CredentialID: p.CredentialID, PKIX: "AA"}, []byte("c")) == nil {
			t.Fatalf("a decoded proof verified against a key that is none: %q", value)
		}
	})
}
