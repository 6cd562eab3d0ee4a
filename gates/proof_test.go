package gates

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/json"
	"testing"
)

// authenticator is a software passkey for tests: it makes assertions the
// way a browser and an authenticator do.
type authenticator struct {
	id   string
	sign func(data []byte) []byte
	key  PublicKey
}

func newAuthenticator(t *testing.T, alg string) *authenticator {
	t.Helper()
	a := &authenticator{id: b64.EncodeToString([]byte("cred-" + alg))}
	var pub any
	switch alg {
	case "es256":
		k, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		pub = &k.PublicKey
		a.sign = func(data []byte) []byte {
			d := sha256.Sum256(data)
			s, _ := ecdsa.SignASN1(rand.Reader, k, d[:])
			return s
		}
	case "ed25519":
		p, k, _ := ed25519.GenerateKey(rand.Reader)
		pub = p
		a.sign = func(data []byte) []byte { return ed25519.Sign(k, data) }
	case "rs256":
		k, _ := rsa.GenerateKey(rand.Reader, 2048)
		pub = &k.PublicKey
		a.sign = func(data []byte) []byte {
			d := sha256.Sum256(data)
			s, _ := rsa.SignPKCS1v15(rand.Reader, k, crypto.SHA256, d[:])
			return s
		}
	}
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	a.key = PublicKey{CredentialID: a.id, PKIX: b64.EncodeToString(der)}
	return a
}

// assert makes an assertion over challenge; tweak may change the client
// data or the authenticator data before signing.
func (a *authenticator) assert(challenge []byte, tweak func(cd map[string]any, ad []byte) []byte) *Proof {
	cd := map[string]any{"type": "webauthn.get", "challenge": b64.EncodeToString(challenge), "origin": "http://localhost:7420", "crossOrigin": false}
	rp := sha256.Sum256([]byte(RelyingParty))
	ad := append(rp[:], 0x05, 0, 0, 0, 7) // user present and verified, count 7
	if tweak != nil {
		ad = tweak(cd, ad)
	}
	clientData, _ := json.Marshal(cd)
	h := sha256.Sum256(clientData)
	return &Proof{
		CredentialID:      a.id,
		AuthenticatorData: b64.EncodeToString(ad),
		ClientDataJSON:    b64.EncodeToString(clientData),
		Signature:         b64.EncodeToString(a.sign(append(append([]byte{}, ad...), h[:]...))),
	}
}

func TestVerifyProof(t *testing.T) {
	change := GestureChallenge("archive", []byte(`{"letter":1}`))
	for _, alg := range []string{"es256", "ed25519", "rs256"} {
		a := newAuthenticator(t, alg)
		other := newAuthenticator(t, alg)
		for _, tt := range []struct {
			label string
			proof *Proof
			key   PublicKey
			ok    bool
		}{
			{"a proof of this change", a.assert(change, nil), a.key, true},
			{"any localhost port", a.assert(change, func(cd map[string]any, ad []byte) []byte { cd["origin"] = "http://localhost:1"; return ad }), a.key, true},
			{"another change", a.assert(GestureChallenge("archive", []byte(`{"letter":2}`)), nil), a.key, false},
			{"another gesture over the same bytes", a.assert(GestureChallenge("ratify", []byte(`{"letter":1}`)), nil), a.key, false},
			{"another key", other.assert(change, nil), a.key, false},
			{"made by another credential, claimed as this one", func() *Proof { p := other.assert(change, nil); p.CredentialID = a.id; return p }(), a.key, false},
			{"a registration, not an assertion", a.assert(change, func(cd map[string]any, ad []byte) []byte { cd["type"] = "webauthn.create"; return ad }), a.key, false},
			{"another site", a.assert(change, func(cd map[string]any, ad []byte) []byte { cd["origin"] = "https://evil.example"; return ad }), a.key, false},
			{"127.0.0.1 is no relying party", a.assert(change, func(cd map[string]any, ad []byte) []byte { cd["origin"] = "http://127.0.0.1:7420"; return ad }), a.key, false},
			{"signed for another relying party", a.assert(change, func(_ map[string]any, ad []byte) []byte {
				rp := sha256.Sum256([]byte("evil.example"))
				return append(rp[:], ad[32:]...)
			}), a.key, false},
			{"no user present", a.assert(change, func(_ map[string]any, ad []byte) []byte { ad[32] = 0x04; return ad }), a.key, false},
			{"short authenticator data", a.assert(change, func(_ map[string]any, ad []byte) []byte { return ad[:33] }), a.key, false},
			{"a tampered signature", func() *Proof {
				p := a.assert(change, nil)
				sig, _ := b64.DecodeString(p.Signature)
				sig[len(sig)-1] ^= 1
				p.Signature = b64.EncodeToString(sig)
				return p
			}(), a.key, false},
			{"tampered client data", func() *Proof {
				p := a.assert(change, nil)
				cd, _ := b64.DecodeString(p.ClientDataJSON)
				p.ClientDataJSON = b64.EncodeToString(append(cd[:len(cd)-1], []byte(`,"x":1}`)...))
				return p
			}(), a.key, false},
			{"not base64url", &Proof{CredentialID: a.id, AuthenticatorData: "***", ClientDataJSON: "e30", Signature: "AA"}, a.key, false},
			{"no proof", nil, a.key, false},
		} {
			err := VerifyProof(tt.proof, tt.key, change)
			switch {
			case tt.ok && err != nil:
				t.Errorf("%s, %s: refused: %v", alg, tt.label, err)
			case !tt.ok && err == nil:
				t.Errorf("%s, %s: verified", alg, tt.label)
			case !tt.ok:
				if r, ok := AsRefusal(err); !ok || r.Code != HumanGestureRequired || r.Field != "proof" {
					t.Errorf("%s, %s: %v, want human_gesture_required on proof", alg, tt.label, err)
				}
			}
		}
	}
}

func TestProofTrailerRoundTrip(t *testing.T) {
	a := newAuthenticator(t, "es256")
	change := GestureChallenge("ratify", []byte("x"))
	p := a.assert(change, nil)
	got, err := DecodeProof(EncodeProof(p))
	if err != nil || *got != *p {
		t.Fatalf("round trip: %+v %v", got, err)
	}
	if err := VerifyProof(got, a.key, change); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"", "!!", b64.EncodeToString([]byte(`{"credential_id":"x","extra":1}`)), b64.EncodeToString([]byte(`{}`)), b64.EncodeToString([]byte(`[1]`))} {
		if _, err := DecodeProof(bad); err == nil {
			t.Errorf("DecodeProof(%q) accepted", bad)
		}
	}
}

func FuzzDecodeProof(f *testing.F) {
	f.Add(EncodeProof(&Proof{CredentialID: "a", AuthenticatorData: "b", ClientDataJSON: "c", Signature: "d"}))
	f.Add("e30")
	f.Fuzz(func(t *testing.T, value string) {
		p, err := DecodeProof(value)
		if err != nil {
			return
		}
		// Whatever decodes re-encodes to a proof that decodes the same,
		// and verifies against nothing it was not made for.
		again, err := DecodeProof(EncodeProof(p))
		if err != nil || *again != *p {
			t.Fatalf("round trip of %q: %+v %v", value, again, err)
		}
		if VerifyProof(p, PublicKey{CredentialID: p.CredentialID, PKIX: "AA"}, []byte("c")) == nil {
			t.Fatalf("a decoded proof verified against a key that is none: %q", value)
		}
	})
}
