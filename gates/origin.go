package gates

// OriginHumanUI is the one origin token that proves a human gesture: the
// tray's browser code stamps it, and the CLI stamps it only after an
// interactive terminal confirmation.
const OriginHumanUI = "human-ui"

// humanOrigins is the closed allow-list. Adding to it is a design change.
var humanOrigins = map[string]bool{OriginHumanUI: true}

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
