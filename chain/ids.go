package chain

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/m1nd/m1nd/rules"
)

// MissionRefPrefix is where mission chains live.
const MissionRefPrefix = RefRoot + "missions/"

// The id checks are written out rather than as regular expressions:
// compiling patterns at start-up costs a visible share of a CLI call.

// isLowerHex reports whether s is exactly n lowercase hex digits.
func isLowerHex(s string, n int) bool {
	if len(s) != n {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// ValidMissionID reports whether id is "msn_" followed by 12 lowercase hex.
func ValidMissionID(id string) bool {
	rest, ok := strings.CutPrefix(id, "msn_")
	return ok && isLowerHex(rest, 12)
}

// ValidLetterID reports whether id is 12 lowercase hex digits.
func ValidLetterID(id string) bool { return isLowerHex(id, 12) }

// NewMissionID returns a fresh random mission id.
func NewMissionID() (string, error) {
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("new mission id: %w", err)
	}
	return "msn_" + hex.EncodeToString(b[:]), nil
}

// MissionRef returns the ref of a mission chain, validating the id first so
// that nothing else ever becomes a ref name.
func MissionRef(id string) (string, error) {
	if !ValidMissionID(id) {
		return "", fmt.Errorf("mission id %q: want msn_ followed by 12 lowercase hex digits", id)
	}
	return MissionRefPrefix + id, nil
}

// RunnerAgent is the agent id runner id speaks as. The colon is not
// ref-safe, so in ref names it becomes "+", which a plain agent id can
// never contain: the mapping is reversible.
func RunnerAgent(id string) string { return rules.RunnerPrefix + id }

// AgentRefName maps a valid agent id to the ref-safe name used in ref paths
// and commit identities.
func AgentRefName(id string) (string, error) {
	if !rules.ValidAgentID(id) {
		return "", fmt.Errorf("agent id %q: want %s", id, rules.AgentIDRule)
	}
	return strings.Replace(id, ":", "+", 1), nil
}

// AgentFromRefName reverses AgentRefName.
func AgentFromRefName(name string) (string, error) {
	id := strings.Replace(name, "+", ":", 1)
	if !rules.ValidAgentID(id) {
		return "", fmt.Errorf("ref name %q is not an agent", name)
	}
	return id, nil
}
