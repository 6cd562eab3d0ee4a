package runnerd

import "time"

// gateWindow spells a gate's run, from start to end, as a receipt's window
// to the second (gates.WindowLayout): both ends truncated to the second,
// so the window is never in the future and a receipt made of it imports
// at once; a gate within one second is given the second before as its
// start, so the window always runs forward (started < ended) without
// anyone waiting for the next second to come.
func gateWindow(start, end time.Time) (started, ended time.Time) {
	started, ended = start.UTC().Truncate(time.Second), end.UTC().Truncate(time.Second)
	if !ended.After(started) {
		started = ended.Add(-time.Second)
	}
	return started, ended
}
