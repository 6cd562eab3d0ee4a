package tray

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/m1nd/m1nd/brain"
	"github.com/m1nd/m1nd/rules"
	"github.com/m1nd/m1nd/rules/rulestest"
)

// softKeyOf is a's credential as navigator.credentials.create hands it
// over, so a key the tray adds can later sign with gatestest.
func softKeyOf(t testing.TB, a *rulestest.Authenticator) *softKey {
	t.Helper()
	id, _ := b64u.DecodeString(a.ID)
	der, _ := b64u.DecodeString(a.Key.PKIX)
	pub, err := x509.ParsePKIXPublicKey(der)
	if err != nil {
		t.Fatal(err)
	}
	k := &softKey{id: id, pkix: der}
	switch p := pub.(type) {
	case *ecdsa.PublicKey:
		raw, _ := p.Bytes()
		k.cose = map[int]any{1: 2, 3: -7, -1: 1, -2: raw[1:33], -3: raw[33:]}
	case ed25519.PublicKey:
		k.cose = map[int]any{1: 1, 3: -8, -1: 6, -2: []byte(p)}
	default:
		t.Fatalf("no COSE for %T", pub)
	}
	return k
}

// keySet reads the key set at refs/m1nd/keys, as git shows it.
func (f *fixture) keySet() (brain.KeySet, string) {
	f.t.Helper()
	var set brain.KeySet
	if err := json.Unmarshal([]byte(f.g.Git("cat-file", "blob", brain.KeysRef+":"+brain.KeysFile)), &set); err != nil {
		f.t.Fatal(err)
	}
	return set, f.g.Git("rev-parse", brain.KeysRef)
}

func credentialIDs(set brain.KeySet) []string {
	var ids []string
	for _, k := range set.Keys {
		ids = append(ids, k.CredentialID)
	}
	return ids
}

// addKey is the body of the keys gesture that adds new: its registration
// made in this tray against fresh options.
func (f *fixture) addKey(new *rulestest.Authenticator, label string) string {
	f.t.Helper()
	body, _ := json.Marshal(map[string]any{"gesture": "keys", "label": label, "credential": softKeyOf(f.t, new).credential(f.t, f.options(), f.origin(), 0x45)})
	return string(body)
}

func removeKey(id string) string { return fmt.Sprintf(`{"gesture":"keys","remove":%q}`, id) }

// TestKeyGestures: a passkey is added to a registered brain, and removed,
// by the gesture "keys", signed by a key the brain already holds over the
// exact key set written; the last key is never removed; every refusal
// writes nothing.
func TestKeyGestures(t *testing.T) {
	f := newFixture(t, false)
	// No key yet: the gesture is refused like every other.
	if status, out, _ := f.gestureOptions(removeKey("AAAA")); status != 403 || out["refused"] != "human_gesture_required" {
		t.Fatalf("keys before any passkey: %d %v", status, out)
	}
	a := f.registerKey("es256")
	b, c := rulestest.New(t, "ed25519"), rulestest.New(t, "es256")
	for _, x := range []*rulestest.Authenticator{b, c} {
		x.Origin = f.origin()
	}
	v1, head1 := f.keySet()

	// Refused, nothing written: every way an add can fail to be proven.
	tampered := func(p *rules.Proof) *rules.Proof {
		sig, _ := base64.RawURLEncoding.DecodeString(p.Signature)
		sig[len(sig)-1] ^= 1
		p.Signature = base64.RawURLEncoding.EncodeToString(sig)
		return p
	}
	for _, tt := range []struct {
		label string
		proof func(challenge []byte) *rules.Proof
	}{
		{"no proof", func([]byte) *rules.Proof { return &rules.Proof{} }},
		{"a tampered assertion", func(ch []byte) *rules.Proof { return tampered(a.Assert(ch, nil)) }},
		{"an unregistered key", func(ch []byte) *rules.Proof {
			e := rulestest.New(t, "es256")
			e.Origin = f.origin()
			return e.Assert(ch, nil)
		}},
		{"the key being added", func(ch []byte) *rules.Proof { return b.Assert(ch, nil) }},
		{"a proof of another change", func([]byte) *rules.Proof {
			other := v1
			other.Version = 2
			return a.Assert(rules.GestureChallenge(rules.GestureKeys, other.Canonical()), nil)
		}},
		{"a proof of another gesture", func(ch []byte) *rules.Proof {
			return a.Assert(rules.GestureChallenge(rules.GestureRatify, ch), nil)
		}},
		{"no user present", func(ch []byte) *rules.Proof {
			return a.Assert(ch, func(_ map[string]any, ad []byte) []byte { ad[32] = 0; return ad })
		}},
	} {
		status, out, challenge := f.gestureOptions(f.addKey(b, "phone"))
		if status != 200 {
			t.Fatalf("%s: options: %d %v", tt.label, status, out)
		}
		status, out = f.commit(challenge, tt.proof(challenge))
		wantRefusal(t, tt.label, status, out, 403, "human_gesture_required", "proof", "")
	}
	if _, head := f.keySet(); head != head1 {
		t.Fatal("a refused key change moved refs/m1nd/keys")
	}

	// Refused at the options: what the change itself cannot be.
	for _, tt := range []struct {
		label, body        string
		status             int
		code, field, words string
	}{
		{"neither add nor remove", `{"gesture":"keys"}`, 422, "invalid_letter", "gesture", "one of credential"},
		{"both", fmt.Sprintf(`{"gesture":"keys","remove":%q,"credential":{"id":"x"}}`, a.ID), 422, "invalid_letter", "gesture", "one of credential"},
		{"an unknown credential", removeKey(b.ID), 422, "invalid_letter", "remove", "does not hold"},
		{"the last key", removeKey(a.ID), 422, "invalid_transition", "keys", "keeps one: add the new passkey before removing the old"},
		{"a registered key again", f.addKey(a, "again"), 422, "invalid_letter", "credential", "registered already"},
		{"a registration made elsewhere", func() string {
			body, _ := json.Marshal(map[string]any{"gesture": "keys", "credential": softKeyOf(t, b).credential(t, f.options(), "http://localhost:1", 0x45)})
			return string(body)
		}(), 403, "human_gesture_required", "credential", "does not hold"},
	} {
		status, out, _ := f.gestureOptions(tt.body)
		wantRefusal(t, tt.label, status, out, tt.status, tt.code, tt.field, tt.words)
	}
	// A code registers nothing on a registered brain, and says how to add.
	status, out := f.register("AAAA-AAAA", "again", softKeyOf(t, b).credential(t, f.options(), f.origin(), 0x45))
	wantRefusal(t, "a code on a registered brain", status, out, 403, "human_gesture_required", "code", "add another passkey")
	if _, head := f.keySet(); head != head1 {
		t.Fatal("a refused key change moved refs/m1nd/keys")
	}

	// Added, signed by a: key set 2 holds a and b, proven in its commit.
	status, out, challenge := f.gestureOptions(f.addKey(b, "phone"))
	if status != 200 {
		t.Fatalf("add: options %d %v", status, out)
	}
	if allow := out["publicKey"].(map[string]any)["allowCredentials"].([]any); len(allow) != 1 || allow[0].(map[string]any)["id"] != a.ID {
		t.Fatalf("add: only registered keys sign: %v", allow)
	}
	proof := a.Assert(challenge, nil)
	if status, out := f.commit(challenge, proof); status != 200 || out["keys_version"] != 2.0 || out["keys"] != 2.0 || out["added"] != b.ID {
		t.Fatalf("add: %d %v", status, out)
	}
	v2, _ := f.keySet()
	if v2.Version != 2 || strings.Join(credentialIDs(v2), ",") != a.ID+","+b.ID || v2.Keys[1].Label != "phone" || v2.Keys[1].PublicKey != b.Key.PKIX {
		t.Fatalf("keys v2: %+v", v2)
	}
	msg := f.g.Git("log", "-1", "--format=%B", brain.KeysRef)
	if !strings.HasPrefix(msg, "keys v2: add phone\n") || !strings.Contains(msg, "\nM1nd-Origin: human-passkey\n") || !strings.Contains(msg, rules.ProofTrailer+": "+rules.EncodeProof(proof)) {
		t.Fatalf("the add's commit:\n%s", msg)
	}
	if status, out := f.commit(challenge, proof); status != 403 || out["field"] != "gesture_id" {
		t.Fatalf("the add again: %d %v", status, out)
	}

	// A lost race: a removal prepared on v2, then c added first.
	_, _, stale := f.gestureOptions(removeKey(a.ID))
	if status, out := f.signed(b, f.addKey(c, "spare")); status != 200 || out["keys_version"] != 3.0 {
		t.Fatalf("add c: %d %v", status, out)
	}
	_, head3 := f.keySet()
	status, out = f.commit(stale, b.Assert(stale, nil))
	wantRefusal(t, "a removal prepared on another set", status, out, 409, "stale_head", "", "moved while this gesture waited")
	if _, head := f.keySet(); head != head3 {
		t.Fatal("a stale removal moved refs/m1nd/keys")
	}

	// Removed: a signs its own removal; then c goes, signed by b; b stays.
	for _, tt := range []struct {
		label   string
		by      *rulestest.Authenticator
		remove  string
		version float64
		left    string
	}{
		{"a removes itself", a, a.ID, 4, b.ID + "," + c.ID},
		{"b removes c", b, c.ID, 5, b.ID},
	} {
		status, out := f.signed(tt.by, removeKey(tt.remove))
		if status != 200 || out["keys_version"] != tt.version || out["removed"] != tt.remove {
			t.Fatalf("%s: %d %v", tt.label, status, out)
		}
		if tt.remove == a.ID {
			// The page's session was a's: it ended with a's key.
			if status, out, _ := f.gestureOptions(removeKey(c.ID)); status != 403 || out["field"] != "session" {
				t.Fatalf("a session of a removed key: %d %v", status, out)
			}
			f.login(b)
		}
		set, _ := f.keySet()
		if float64(set.Version) != tt.version || strings.Join(credentialIDs(set), ",") != tt.left {
			t.Fatalf("%s: keys %+v", tt.label, set)
		}
	}
	if subject := f.g.Git("log", "-1", "--format=%s", brain.KeysRef); subject != "keys v5: remove spare" {
		t.Fatalf("subject %q", subject)
	}
	_, head5 := f.keySet()
	status, out, _ = f.gestureOptions(removeKey(b.ID))
	wantRefusal(t, "the last key", status, out, 422, "invalid_transition", "keys", "keeps one")

	// Later gestures: the removed key no longer signs, the kept one does.
	ratify := `{"gesture":"ratify","expected_store_version":1,"block_ids":["sb_shop_core"]}`
	f.do("POST", "/api/candidate_edit", `{"expected_store_version":1,"by":"owner","ops":[{"op":"rename","block_id":"sb_shop_core","name":"Core"}]}`, nil)
	ratify = strings.Replace(ratify, `"expected_store_version":1`, `"expected_store_version":2`, 1)
	if status, out := f.signed(a, ratify); status != 403 || out["refused"] != "human_gesture_required" {
		t.Fatalf("a removed key signs: %d %v", status, out)
	}
	if status, out := f.signed(b, ratify); status != 200 || out["store_version"] != 3.0 {
		t.Fatalf("the kept key signs: %d %v", status, out)
	}
	if _, head := f.keySet(); head != head5 {
		t.Fatal("refs/m1nd/keys moved after the last change")
	}
	_, out = f.do("GET", "/api/passkeys", "", nil)
	if keys := out["keys"].([]any); len(keys) != 1 || keys[0].(map[string]any)["credential_id"] != b.ID || keys[0].(map[string]any)["label"] != "phone" {
		t.Fatalf("passkeys: %v", out)
	}
}
