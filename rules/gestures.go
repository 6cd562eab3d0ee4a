package rules

// The human gestures, by the names their challenges carry (GestureChallenge):
// each is spelled here once, and every writer and verifier names a gesture
// through these constants.
const (
	// GestureArchive sets a merge_wait mission's candidate aside: its proof
	// binds the archived letter's canonical bytes.
	GestureArchive = "archive"
	// GestureReceiptImport imports a receipt that lands no mission: its proof
	// binds the store commit's parent and tree.
	GestureReceiptImport = "receipt_import"
	// GestureRatify ratifies candidate blocks: its proof binds the store
	// commit's parent and tree.
	GestureRatify = "ratify"
	// GestureLand lands a mission: its proof binds the mission, the target
	// branch, the exact commits (the branch's and the target's heads, the
	// tree the target will hold) and the store change of the import.
	GestureLand = "land"
	// GestureKeys changes the brain's passkeys: its proof binds the new key
	// set's canonical bytes.
	GestureKeys = "keys"
	// GesturePins approves the runner pins whose gates prove work: its proof
	// binds the approved set's canonical bytes.
	GesturePins = "pins"
	// GestureRename renames a registered brain: its proof binds the new
	// registration's canonical bytes.
	GestureRename = "rename"
)

// Gestures lists every gesture, in the order lessons name them.
var Gestures = []string{GestureLand, GestureArchive, GestureReceiptImport, GestureRatify, GestureKeys, GesturePins, GestureRename}

// GestureField is the input a gesture's origin is refused on when it is
// missing or claimed: what a lesson names as the field at fault.
func GestureField(gesture string) string {
	switch gesture {
	case GestureArchive:
		return "archived_via"
	case GestureRatify:
		return "ratified_via"
	case GestureReceiptImport, GestureLand:
		return "imported_via"
	}
	return "proof"
}
