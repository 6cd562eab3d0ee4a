package gates

// The origins of a human gesture, recorded on the commit it makes.
const (
	// OriginHumanUI is a gesture made in the tray (its page stamps it on a
	// click); until tray gestures carry a passkey proof it is a claim.
	OriginHumanUI = "human-ui"
	// OriginHumanTTY is a gesture confirmed at an interactive terminal: the
	// weaker mode, which stops an agent that simply calls the verb, not one
	// that fakes a pty.
	OriginHumanTTY = "human-tty"
)

// humanOrigins is the closed allow-list. Adding to it is a design change.
var humanOrigins = map[string]bool{OriginHumanUI: true, OriginHumanTTY: true}

// IsHumanOrigin reports whether origin is on the allow-list.
func IsHumanOrigin(origin string) bool { return humanOrigins[origin] }

// RequireHumanOrigin refuses unless origin is on the closed allow-list. It
// runs before anything else about the request is looked at. field names the
// input that carries the origin (archived_via, ratified_via, …).
//
// The token is forgeable by a process of the same user: this stops an agent
// that simply calls the verb, not a hostile local process.
func RequireHumanOrigin(origin, field string) error {
	if humanOrigins[origin] {
		return nil
	}
	return Refuse(HumanGestureRequired, field)
}
