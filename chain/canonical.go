package chain

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/m1nd/m1nd/rules"
)

// CanonicalJSON is the one encoding of every document m1nd chains (letters,
// mail, memories, shared documents): compact JSON in the struct's field
// order, no HTML escaping, no trailing new line. v must be a struct of
// strings, integers, bools and slices, which always encode.
func CanonicalJSON(v any) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(fmt.Sprintf("encode %T: %v", v, err))
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// DecodeCanonical decodes a stored document into v (a pointer to a
// struct) and refuses it, invalid_letter, unless data is exactly v's
// canonical bytes. The one comparison shuts out what encoding/json alone
// lets through: unknown or case-variant keys, duplicates, trailing data,
// invalid UTF-8, fields that canonical bytes leave out. file names the
// document in the lesson (mail.json).
func DecodeCanonical(data []byte, v any, file string) error {
	if err := json.Unmarshal(data, v); err != nil {
		return rules.Refusef(rules.InvalidLetter, "", "%s does not hold a JSON document of its kind", file)
	}
	return CheckCanonical(data, v, file)
}

// DecodeAs decodes a stored document of type T: its canonical bytes and
// nothing else (see DecodeCanonical).
func DecodeAs[T any](data []byte, file string) (*T, error) {
	v := new(T)
	if err := DecodeCanonical(data, v, file); err != nil {
		return nil, err
	}
	return v, nil
}

// CheckCanonical refuses, invalid_letter, a stored document whose bytes
// are not the canonical bytes of v, its decoded form.
func CheckCanonical(data []byte, v any, file string) error {
	if !bytes.Equal(CanonicalJSON(v), data) {
		return rules.Refusef(rules.InvalidLetter, "", "%s must hold the document's canonical bytes (compact JSON in key order), so its id is the sha256 of the file", file)
	}
	return nil
}

// DocHash is the full sha256 of a document's canonical bytes, 64 hex: what
// a signature binds (DocID's 12 are a name, not a binding).
func DocHash(canonical []byte) string {
	sum := sha256.Sum256(canonical)
	return hex.EncodeToString(sum[:])
}

// DocID is a document's content id: the first 12 hex digits of sha256
// over its canonical bytes.
func DocID(canonical []byte) string {
	sum := sha256.Sum256(canonical)
	return hex.EncodeToString(sum[:6])
}
