package rules

import (
	"crypto/ecdh"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"reflect"
	"testing"
)

// pkixKeys are PKIX DER keys of every kind crypto/x509 parses, the ones
// ParsePublicKey takes and the ones it leaves.
func pkixKeys(t testing.TB) map[string][]byte {
	t.Helper()
	keys := map[string][]byte{}
	add := func(name string, pub any) {
		der, err := x509.MarshalPKIXPublicKey(pub)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		keys[name] = der
	}
	for _, c := range []elliptic.Curve{elliptic.P256(), elliptic.P384(), elliptic.P521()} {
		k, err := ecdsa.GenerateKey(c, rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		add("ecdsa "+c.Params().Name, &k.PublicKey)
	}
	pub, _, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	add("ed25519", pub)
	rk, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	add("rsa 2048", &rk.PublicKey)
	xk, err := ecdh.X25519().GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	add("x25519", xk.PublicKey())
	return keys
}

// TestParsePublicKeyAgreesWithX509: every key a passkey signs with parses
// to what crypto/x509 makes of it; an X25519 key (no signatures), a cut
// key, trailing bytes and garbage are refused.
func TestParsePublicKeyAgreesWithX509(t *testing.T) {
	for name, der := range pkixKeys(t) {
		want, werr := x509.ParsePKIXPublicKey(der)
		got, err := ParsePublicKey(der)
		if name == "x25519" {
			if werr != nil || err == nil {
				t.Errorf("x25519: x509 %v, ours %v (want refused)", werr, err)
			}
			continue
		}
		if werr != nil || err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%s: got %#v %v, x509 %#v %v", name, got, err, want, werr)
		}
		for _, bad := range [][]byte{der[:len(der)-1], append(append([]byte{}, der...), 0), der[1:], nil} {
			if k, err := ParsePublicKey(bad); err == nil {
				t.Errorf("%s: a damaged key parsed: %#v", name, k)
			}
		}
	}
}

// FuzzParsePublicKey: ParsePublicKey never panics and takes nothing
// crypto/x509 refuses; what both take, they read alike.
func FuzzParsePublicKey(f *testing.F) {
	for _, der := range pkixKeys(f) {
		f.Add(der)
	}
	f.Fuzz(func(t *testing.T, der []byte) {
		got, err := ParsePublicKey(der)
		if err != nil {
			return
		}
		want, werr := x509.ParsePKIXPublicKey(der)
		if werr != nil {
			t.Fatalf("%x: ours %#v, x509 refuses: %v", der, got, werr)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%x: ours %#v, x509 %#v", der, got, want)
		}
	})
}

// TestTrayOrigin: a tray's origin is http://localhost with a port or none,
// serialised as a browser serialises an origin; nothing else.
func TestTrayOrigin(t *testing.T) {
	for origin, want := range map[string]bool{
		"http://localhost":          true,
		"http://localhost:1":        true,
		"http://localhost:65535":    true,
		"http://localhost:65536":    false,
		"http://localhost:0":        false,
		"http://localhost:08080":    false,
		"http://localhost:":         false,
		"http://localhost:+80":      false,
		"http://localhost/":         false,
		"http://localhost?x":        false,
		"http://localhost#x":        false,
		"http://localhost.evil":     false,
		"http://localhost@evil":     false,
		"http://user@localhost":     false,
		"https://localhost":         false,
		"HTTP://LOCALHOST":          false,
		"http://127.0.0.1:8080":     false,
		"http://localhost:8080/x":   false,
		"":                          false,
		"http://localhost:99999999": false,
	} {
		if got := trayOrigin(origin); got != want {
			t.Errorf("trayOrigin(%q) = %v, want %v", origin, got, want)
		}
	}
}
