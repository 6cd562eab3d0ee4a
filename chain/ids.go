package chain

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"regexp"
	"strings"
)

// MissionRefPrefix is where mission chains live.
const MissionRefPrefix = "refs/m1nd/missions/"

var (
	missionIDRe = regexp.MustCompile(`^msn_[0-9a-f]{12}$`)
	agentIDRe   = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,63}$`)
	letterIDRe  = regexp.MustCompile(`^[0-9a-f]{12}$`)
)

// ValidMissionID reports whether id is "msn_" followed by 12 lowercase hex.
func ValidMissionID(id string) bool { return missionIDRe.MatchString(id) }

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

// runnerPrefix marks the agent ids a runner daemon speaks as. The colon is
// not ref-safe, so in ref names it becomes "+", which a plain agent id can
// never contain: the mapping is reversible.
const runnerPrefix = "runnerd:"

// ValidAgentID reports whether id is a plain agent id
// ([a-z0-9][a-z0-9._-]{0,63}) or "runnerd:" followed by one.
func ValidAgentID(id string) bool {
	if rest, ok := strings.CutPrefix(id, runnerPrefix); ok {
		return agentIDRe.MatchString(rest)
	}
	return agentIDRe.MatchString(id)
}

// AgentRefName maps a valid agent id to the ref-safe name used in ref paths
// and commit identities.
func AgentRefName(id string) (string, error) {
	if !ValidAgentID(id) {
		return "", fmt.Errorf("agent id %q: want [a-z0-9][a-z0-9._-]{0,63}, optionally after runnerd:", id)
	}
	return strings.Replace(id, ":", "+", 1), nil
}

// AgentFromRefName reverses AgentRefName.
func AgentFromRefName(name string) (string, error) {
	id := strings.Replace(name, "+", ":", 1)
	if !ValidAgentID(id) {
		return "", fmt.Errorf("ref name %q is not an agent", name)
	}
	return id, nil
}
