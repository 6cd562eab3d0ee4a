package gitstore

import (
	"encoding/hex"
	"fmt"
)

// Hash is a SHA-1 object name.
type Hash [20]byte

// ZeroHash is the all-zero object name git uses for "no object".
var ZeroHash Hash

// ParseHash reads a 40-character lowercase or uppercase hex object name.
func ParseHash(s string) (Hash, error) {
	var h Hash
	if len(s) != 40 {
		return h, fmt.Errorf("object name %q: want 40 hex characters", s)
	}
	if _, err := hex.Decode(h[:], []byte(s)); err != nil {
		return h, fmt.Errorf("object name %q: %w", s, err)
	}
	return h, nil
}

// String returns the 40-character hex form.
func (h Hash) String() string { return hex.EncodeToString(h[:]) }

// IsZero reports whether h is the zero hash.
func (h Hash) IsZero() bool { return h == ZeroHash }
