package tray

import (
	"testing"
	"time"
)

// The safety-net listing comes every 5 s on a small brain, and spaces
// itself out as listing grows dear, so it never costs over 1/400 of the
// watcher's time.
func TestSafetyEverySpacesOutDearListings(t *testing.T) {
	for cost, want := range map[time.Duration]time.Duration{
		0:                        5 * time.Second,
		time.Millisecond:         5 * time.Second,
		12500 * time.Microsecond: 5 * time.Second,
		100 * time.Millisecond:   40 * time.Second,
		time.Second:              400 * time.Second,
	} {
		got := safetyEvery(cost)
		if got != want {
			t.Errorf("safetyEvery(%s) = %s, want %s", cost, got, want)
		}
		if cost > 0 && float64(cost)/float64(got) > 1.0/400 {
			t.Errorf("a listing of %s every %s costs over 1/400", cost, got)
		}
	}
}
