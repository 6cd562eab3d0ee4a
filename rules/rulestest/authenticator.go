// Package rulestest is a software passkey for tests: it makes WebAuthn
// assertions the way a browser and an authenticator do, so the laws'
// proof checks are tested against real signatures.
package rulestest

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"testing"

	"github.com/m1nd/m1nd/rules"
)

var b64 = base64.RawURLEncoding

// Authenticator holds one credential's private key.
type Authenticator struct {
	ID     string          // the credential id, base64url
	Key    rules.PublicKey // what the tray registers for it
	Origin string          // the page the assertion is made on; http://localhost:7420 by default
	sign   func([]byte) []byte
}

// New makes a credential of alg: "es256", "ed25519" or "rs256".
func New(t testing.TB, alg string) *Authenticator {
	t.Helper()
	id := make([]byte, 16)
	rand.Read(id)
	a := &Authenticator{ID: b64.EncodeToString(id), Origin: "http://localhost:7420"}
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
	default:
		t.Fatalf("gatestest: no algorithm %q", alg)
	}
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	a.Key = rules.PublicKey{CredentialID: a.ID, PKIX: b64.EncodeToString(der)}
	return a
}

// Named is a credential that is the same on every call with name: an
// ed25519 key from a seed of the name, so a scenario's commands, each a
// process of its own, sign as one passkey.
func Named(name string) *Authenticator {
	seed := sha256.Sum256([]byte("m1nd-test-passkey:" + name))
	k := ed25519.NewKeyFromSeed(seed[:])
	id := sha256.Sum256([]byte("m1nd-test-credential:" + name))
	a := &Authenticator{ID: b64.EncodeToString(id[:16]), Origin: "http://localhost:7420"}
	a.sign = func(data []byte) []byte { return ed25519.Sign(k, data) }
	der, _ := x509.MarshalPKIXPublicKey(k.Public())
	a.Key = rules.PublicKey{CredentialID: a.ID, PKIX: b64.EncodeToString(der)}
	return a
}

// Assert makes an assertion over challenge from a's Origin with the user
// present; tweak, when set, may change the client data and
// return other authenticator data before it is signed.
func (a *Authenticator) Assert(challenge []byte, tweak func(clientData map[string]any, authData []byte) []byte) *rules.Proof {
	cd := map[string]any{"type": "webauthn.get", "challenge": b64.EncodeToString(challenge), "origin": a.Origin, "crossOrigin": false}
	rp := sha256.Sum256([]byte(rules.RelyingParty))
	ad := append(rp[:], 0x05, 0, 0, 0, 7) // user present and verified, count 7
	if tweak != nil {
		ad = tweak(cd, ad)
	}
	clientData, _ := json.Marshal(cd)
	h := sha256.Sum256(clientData)
	return &rules.Proof{
		CredentialID:      a.ID,
		AuthenticatorData: b64.EncodeToString(ad),
		ClientDataJSON:    b64.EncodeToString(clientData),
		Signature:         b64.EncodeToString(a.sign(append(append([]byte{}, ad...), h[:]...))),
	}
}
