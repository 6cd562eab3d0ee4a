package tray

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"math/big"
	"regexp"
	"strings"
	"testing"

	"github.com/go-webauthn/webauthn/protocol/webauthncbor"

	"github.com/m1nd/m1nd/brain"
	"github.com/m1nd/m1nd/gitstore"
	"github.com/m1nd/m1nd/rules"
)

var b64u = base64.RawURLEncoding

// softKey is a software authenticator's new credential: what the browser
// hands the page after navigator.credentials.create, made by hand.
type softKey struct {
	id   []byte
	cose map[int]any
	pkix []byte
}

func newSoftKey(t *testing.T, alg string) *softKey {
	t.Helper()
	k := &softKey{id: make([]byte, 16)}
	rand.Read(k.id)
	var pub any
	switch alg {
	case "es256":
		p, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		pub = &p.PublicKey
		raw, _ := p.PublicKey.Bytes() // 0x04 || x || y
		k.cose = map[int]any{1: 2, 3: -7, -1: 1, -2: raw[1:33], -3: raw[33:]}
	case "ed25519":
		p, _, _ := ed25519.GenerateKey(rand.Reader)
		pub = p
		k.cose = map[int]any{1: 1, 3: -8, -1: 6, -2: []byte(p)}
	case "rs256":
		p, _ := rsa.GenerateKey(rand.Reader, 2048)
		pub = &p.PublicKey
		k.cose = map[int]any{1: 3, 3: -257, -1: p.N.Bytes(), -2: big.NewInt(int64(p.E)).Bytes()}
	default:
		t.Fatalf("no algorithm %q", alg)
	}
	var err error
	if k.pkix, err = x509.MarshalPKIXPublicKey(pub); err != nil {
		t.Fatal(err)
	}
	return k
}

// credential answers a challenge from origin with "none" attestation;
// flags are the authenticator data's (0x41: user present, attested data).
func (k *softKey) credential(t testing.TB, challenge, origin string, flags byte) json.RawMessage {
	t.Helper()
	coseKey, err := webauthncbor.Marshal(k.cose)
	if err != nil {
		t.Fatal(err)
	}
	rp := sha256.Sum256([]byte(rules.RelyingParty))
	auth := append(append([]byte{}, rp[:]...), flags, 0, 0, 0, 0)
	auth = append(auth, make([]byte, 16)...) // aaguid
	auth = binary.BigEndian.AppendUint16(auth, uint16(len(k.id)))
	auth = append(append(auth, k.id...), coseKey...)
	att, err := webauthncbor.Marshal(map[string]any{"fmt": "none", "attStmt": map[string]any{}, "authData": auth})
	if err != nil {
		t.Fatal(err)
	}
	cd, _ := json.Marshal(map[string]any{"type": "webauthn.create", "challenge": challenge, "origin": origin, "crossOrigin": false})
	out, _ := json.Marshal(map[string]any{
		"id": b64u.EncodeToString(k.id), "rawId": b64u.EncodeToString(k.id), "type": "public-key",
		"response": map[string]any{"clientDataJSON": b64u.EncodeToString(cd), "attestationObject": b64u.EncodeToString(att)},
	})
	return out
}

// options asks for registration options and returns their challenge.
func (f *fixture) options() string {
	f.t.Helper()
	status, out := f.do("POST", "/api/passkey/options", `{}`, nil)
	if status != 200 {
		f.t.Fatalf("options: %d %v", status, out)
	}
	pk := out["publicKey"].(map[string]any)
	if rp := pk["rp"].(map[string]any); rp["id"] != "localhost" || rp["name"] != "m1nd shop" {
		f.t.Fatalf("options name the relying party %v", rp)
	}
	return pk["challenge"].(string)
}

func (f *fixture) register(code, label string, credential json.RawMessage) (int, map[string]any) {
	f.t.Helper()
	body, _ := json.Marshal(map[string]any{"code": code, "label": label, "credential": credential})
	return f.do("POST", "/api/passkey/register", string(body), nil)
}

func (f *fixture) origin() string { return "http://localhost:" + f.srv.port }

func wantRefusal(t *testing.T, label string, status int, out map[string]any, wantStatus int, code, field, lesson string) {
	t.Helper()
	got, _ := out["field"].(string)
	if status != wantStatus || out["refused"] != code || got != field || !strings.Contains(out["lesson"].(string), lesson) {
		t.Errorf("%s: %d %v, want %d %s (field %q) saying %q", label, status, out, wantStatus, code, field, lesson)
	}
}

func TestPasskeyOptions(t *testing.T) {
	f := newFixture(t, false)
	status, out := f.do("POST", "/api/passkey/options", `{}`, nil)
	if status != 200 {
		t.Fatalf("%d %v", status, out)
	}
	pk := out["publicKey"].(map[string]any)
	var algs []float64
	for _, p := range pk["pubKeyCredParams"].([]any) {
		algs = append(algs, p.(map[string]any)["alg"].(float64))
	}
	sel := pk["authenticatorSelection"].(map[string]any)
	if len(algs) != 3 || algs[0] != -7 || algs[1] != -8 || algs[2] != -257 || sel["userVerification"] != "preferred" || pk["attestation"] != "none" {
		t.Fatalf("options: %v", pk)
	}
	if c, _ := b64u.DecodeString(pk["challenge"].(string)); len(c) < 16 {
		t.Fatalf("challenge %v", pk["challenge"])
	}
	if u, _ := b64u.DecodeString(pk["user"].(map[string]any)["id"].(string)); len(u) != 16 {
		t.Fatalf("user handle %v", pk["user"])
	}
	if again := f.options(); again == pk["challenge"] {
		t.Fatal("two options carry one challenge")
	}
	status, out = f.do("POST", "/api/passkey/options", `{"x":1}`, nil)
	wantRefusal(t, "options with a field", status, out, 422, "invalid_letter", "", "not the JSON object")
	status, out = f.do("POST", "/api/passkey/options", `{}`, map[string]string{"Origin": "http://evil.example"})
	if status != 403 || out["error"] != "bad_origin" {
		t.Fatalf("options from another origin: %d %v", status, out)
	}
}

// The whole registration over the HTTP API with a software authenticator,
// every refusal on the way, and what lands in refs/m1nd/keys.
func TestPasskeyRegistration(t *testing.T) {
	f := newFixture(t, false)
	_, out := f.do("GET", "/api/passkeys", "", nil)
	if out["registered"] != false || out["registration"] != false || len(out["keys"].([]any)) != 0 {
		t.Fatalf("passkeys before any code: %v", out)
	}
	key := newSoftKey(t, "es256")
	status, out := f.register("AAAA-AAAA", "laptop", key.credential(t, f.options(), f.origin(), 0x41))
	wantRefusal(t, "no code offered", status, out, 403, "human_gesture_required", "code", "offers no registration code")

	code, err := f.srv.OfferRegistration()
	if err != nil || !regexp.MustCompile(`^[A-Z2-7]{4}-[A-Z2-7]{4}$`).MatchString(code) {
		t.Fatalf("code %q %v", code, err)
	}
	if _, out := f.do("GET", "/api/passkeys", "", nil); out["registration"] != true {
		t.Fatalf("passkeys with a code offered: %v", out)
	}
	wrong := "ZZZZ-ZZZZ"
	if code == wrong {
		wrong = "YYYY-YYYY"
	}
	status, out = f.register(wrong, "laptop", key.credential(t, f.options(), f.origin(), 0x41))
	wantRefusal(t, "wrong code", status, out, 403, "human_gesture_required", "code", "not the registration code")
	status, out = f.do("POST", "/api/passkey/register", `{"garbage`, nil)
	wantRefusal(t, "not JSON: the code is checked first", status, out, 403, "human_gesture_required", "code", "not the registration code")
	status, out = f.do("POST", "/api/passkey/register", `{"code":"`+code+`","label":"laptop","credential":{},"extra":1}`, nil)
	wantRefusal(t, "an unknown field", status, out, 422, "invalid_letter", "", "not the JSON object")
	status, out = f.do("POST", "/api/passkey/register", `{"code":"`+code+`","label":"laptop"}`, nil)
	wantRefusal(t, "no credential", status, out, 422, "invalid_letter", "credential", "navigator.credentials.create")
	status, out = f.do("POST", "/api/passkey/register", `{"code":"`+code+`","label":"laptop","credential":{"id":"x"}}`, nil)
	wantRefusal(t, "a credential that is not one", status, out, 422, "invalid_letter", "credential", "not a WebAuthn registration response")
	status, out = f.register(code, "laptop\u202egnp.exe", key.credential(t, f.options(), f.origin(), 0x41))
	wantRefusal(t, "a label with a bidi override", status, out, 422, "invalid_letter", "label", "plain text")
	status, out = f.register(code, "laptop", key.credential(t, b64u.EncodeToString(make([]byte, 32)), f.origin(), 0x41))
	wantRefusal(t, "a challenge never handed out", status, out, 403, "human_gesture_required", "credential", "did not hand out")
	status, out = f.register(code, "laptop", key.credential(t, f.options(), "http://127.0.0.1:"+f.srv.port, 0x41))
	wantRefusal(t, "made on another origin", status, out, 403, "human_gesture_required", "credential", "does not hold")
	status, out = f.register(code, "laptop", key.credential(t, f.options(), f.origin(), 0x40))
	wantRefusal(t, "no user present", status, out, 403, "human_gesture_required", "credential", "does not hold")
	if refs := f.g.Git("for-each-ref", brain.KeysRef); refs != "" {
		t.Fatalf("a refused registration wrote %s", refs)
	}

	// The real one, typed in lower case; its challenge works once.
	challenge := f.options()
	cred := key.credential(t, challenge, f.origin(), 0x45)
	status, out = f.register(strings.ToLower(code), "  my   laptop ", cred)
	if status != 200 || out["ok"] != true || out["credential_id"] != b64u.EncodeToString(key.id) || out["keys_version"] != float64(1) {
		t.Fatalf("register: %d %v", status, out)
	}
	var set brain.KeySet
	if err := json.Unmarshal([]byte(f.g.Git("cat-file", "blob", brain.KeysRef+":"+brain.KeysFile)), &set); err != nil {
		t.Fatal(err)
	}
	if set.Version != 1 || len(set.Keys) != 1 || set.Keys[0].PublicKey != b64u.EncodeToString(key.pkix) || set.Keys[0].Label != "my laptop" || set.Keys[0].AddedAt != "2026-11-30T12:00:00Z" {
		t.Fatalf("keys.json: %+v", set)
	}
	if subject := f.g.Git("log", "-1", "--format=%s", brain.KeysRef); subject != "keys v1: register my laptop" {
		t.Fatalf("subject %q", subject)
	}
	_, out = f.do("GET", "/api/passkeys", "", nil)
	keys := out["keys"].([]any)
	if out["registered"] != true || out["registration"] != false || len(keys) != 1 || keys[0].(map[string]any)["label"] != "my laptop" || keys[0].(map[string]any)["public_key"] != nil {
		t.Fatalf("passkeys after: %v", out)
	}

	// A registered brain takes no second key this way, with any code: a
	// key is added by a signed gesture (TestKeyGestures).
	status, out = f.register(code, "again", newSoftKey(t, "es256").credential(t, f.options(), f.origin(), 0x45))
	wantRefusal(t, "a key is registered", status, out, 403, "human_gesture_required", "code", `press "add another passkey" in the tray`)
	if code, err := f.srv.OfferRegistration(); code != "" || err != nil {
		t.Fatalf("a registered brain is offered code %q (%v)", code, err)
	}

	// The code works once: with the key ref gone, it registers nothing.
	f.g.Git("update-ref", "-d", brain.KeysRef)
	status, out = f.register(code, "again", newSoftKey(t, "es256").credential(t, f.options(), f.origin(), 0x45))
	wantRefusal(t, "the code again", status, out, 403, "human_gesture_required", "code", "used already")
}

// Every algorithm the options offer lands as the PKIX key gates verifies.
func TestPasskeyAlgorithms(t *testing.T) {
	for _, alg := range []string{"es256", "ed25519", "rs256"} {
		t.Run(alg, func(t *testing.T) {
			f := newFixture(t, false)
			code, _ := f.srv.OfferRegistration()
			key := newSoftKey(t, alg)
			if status, out := f.register(code, alg, key.credential(t, f.options(), f.origin(), 0x41)); status != 200 {
				t.Fatalf("%d %v", status, out)
			}
			head, _, _ := f.srv.repo.ReadRef(brain.KeysRef)
			set, err := brain.ReadKeys(f.srv.repo, head)
			if err != nil || head == gitstore.ZeroHash {
				t.Fatal(err)
			}
			if set.Keys[0].PublicKey != b64u.EncodeToString(key.pkix) {
				t.Fatalf("stored %s, want %s", set.Keys[0].PublicKey, b64u.EncodeToString(key.pkix))
			}
		})
	}
}

func TestPasskeyReadOnly(t *testing.T) {
	f := newFixture(t, true)
	if code, err := f.srv.OfferRegistration(); code != "" || err != nil {
		t.Fatalf("a read-only owner offers %q (%v)", code, err)
	}
	for _, path := range []string{"/api/passkey/options", "/api/passkey/register"} {
		status, out := f.do("POST", path, `{}`, nil)
		if status != 403 || out["refused"] != string(rules.ReadOnlyOwner) {
			t.Errorf("%s: %d %v", path, status, out)
		}
	}
}
