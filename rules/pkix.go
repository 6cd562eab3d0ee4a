package rules

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"encoding/asn1"
	"errors"
	"math/big"
)

// ParsePublicKey reads a public key as PKIX DER (a SubjectPublicKeyInfo,
// what x509.MarshalPKIXPublicKey writes): an ECDSA key on P-256, P-384 or
// P-521, an Ed25519 key or an RSA key, the algorithms a passkey signs
// with. It is crypto/x509's parser cut to those keys (and held to it by a
// test): x509 links the net packages, whose start-up every hot verb that
// judges a proof would pay.
func ParsePublicKey(der []byte) (any, error) {
	var spki struct {
		Algorithm struct {
			Algorithm  asn1.ObjectIdentifier
			Parameters asn1.RawValue `asn1:"optional"`
		}
		PublicKey asn1.BitString
	}
	if rest, err := asn1.Unmarshal(der, &spki); err != nil || len(rest) > 0 {
		return nil, errPublicKey
	}
	alg, params, bits := spki.Algorithm.Algorithm, spki.Algorithm.Parameters, spki.PublicKey
	if bits.BitLength%8 != 0 {
		return nil, errPublicKey
	}
	switch {
	case alg.Equal(oidECPublicKey):
		var curve asn1.ObjectIdentifier
		if rest, err := asn1.Unmarshal(params.FullBytes, &curve); err != nil || len(rest) > 0 {
			return nil, errPublicKey
		}
		c := namedCurve(curve)
		if c == nil {
			return nil, errPublicKey
		}
		return ecdsa.ParseUncompressedPublicKey(c, bits.Bytes)
	case alg.Equal(oidEd25519):
		if len(params.FullBytes) != 0 || len(bits.Bytes) != ed25519.PublicKeySize {
			return nil, errPublicKey
		}
		return ed25519.PublicKey(bits.Bytes), nil
	case alg.Equal(oidRSA):
		// The parameters are NULL (RFC 3279, 2.3.1), as x509 requires.
		if !bytes.Equal(params.FullBytes, asn1.NullBytes) {
			return nil, errPublicKey
		}
		var k struct {
			N *big.Int
			E int
		}
		if rest, err := asn1.Unmarshal(bits.Bytes, &k); err != nil || len(rest) > 0 {
			return nil, errPublicKey
		}
		if k.N.Sign() <= 0 || k.E <= 0 {
			return nil, errPublicKey
		}
		return &rsa.PublicKey{N: k.N, E: k.E}, nil
	}
	return nil, errPublicKey
}

var errPublicKey = errors.New("not a PKIX ECDSA, Ed25519 or RSA public key")

var (
	oidECPublicKey = asn1.ObjectIdentifier{1, 2, 840, 10045, 2, 1}
	oidEd25519     = asn1.ObjectIdentifier{1, 3, 101, 112}
	oidRSA         = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 1, 1}
)

// namedCurve is the curve an EC key's parameters name, or nil.
func namedCurve(oid asn1.ObjectIdentifier) elliptic.Curve {
	switch {
	case oid.Equal(asn1.ObjectIdentifier{1, 2, 840, 10045, 3, 1, 7}):
		return elliptic.P256()
	case oid.Equal(asn1.ObjectIdentifier{1, 3, 132, 0, 34}):
		return elliptic.P384()
	case oid.Equal(asn1.ObjectIdentifier{1, 3, 132, 0, 35}):
		return elliptic.P521()
	}
	return nil
}
