package rules

// The origins of a human gesture, recorded on the commit it makes.
const (
	// OriginHumanUI is a gesture the tray's page claimed before tray
	// gestures were signed: still read in history, no longer written.
	OriginHumanUI = "human-ui"
	// OriginHumanTTY is a gesture confirmed at an interactive terminal: the
	// weaker mode, which stops an agent that simply calls the verb, not one
	// that fakes a pty.
	OriginHumanTTY = "human-tty"
	// OriginHumanPasskey is a gesture signed in the tray by a registered
	// passkey: it counts only with a proof that verifies (VerifyProof).
	OriginHumanPasskey = "human-passkey"
)

// OriginTrailer is the commit trailer that names a gesture's origin.
const OriginTrailer = "M1nd-Origin"

// HumanName is the name the human's own work goes by: the CLI's default
// agent, the tray's writes. An agent's mail or memory may not claim it,
// and a letter that carries it is a name, not a proof.
const HumanName = "owner"

// writeOrigin reports whether origin is on the closed allow-list of
// origins a gesture is written with today. Adding to it is a design
// change.
func writeOrigin(origin string) bool { return origin == OriginHumanTTY || origin == OriginHumanPasskey }

// IsHumanOrigin reports whether a commit read from history may carry
// origin: the write allow-list, and the tray's former claim.
func IsHumanOrigin(origin string) bool { return writeOrigin(origin) || origin == OriginHumanUI }

// RequireHumanOrigin refuses unless origin is on the closed allow-list. It
// runs before anything else about the request is looked at. field names the
// input that carries the origin (archived_via, ratified_via, …).
//
// The token is forgeable by a process of the same user: this stops an agent
// that simply calls the verb, not a hostile local process.
func RequireHumanOrigin(origin, field string) error {
	if writeOrigin(origin) {
		return nil
	}
	return Refuse(HumanGestureRequired, field)
}
