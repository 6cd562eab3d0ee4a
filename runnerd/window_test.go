package runnerd

import (
	"testing"
	"time"
)

func TestGateWindow(t *testing.T) {
	at := func(s string) time.Time {
		t.Helper()
		v, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	for _, tc := range []struct {
		name, start, end     string
		wantStart, wantEnded string
	}{
		{"within one second", "2026-12-01T10:00:00.2Z", "2026-12-01T10:00:00.7Z", "2026-12-01T09:59:59Z", "2026-12-01T10:00:00Z"},
		{"across a second", "2026-12-01T10:00:00.9Z", "2026-12-01T10:00:01.1Z", "2026-12-01T10:00:00Z", "2026-12-01T10:00:01Z"},
		{"minutes long", "2026-12-01T10:00:00.5Z", "2026-12-01T10:03:07.5Z", "2026-12-01T10:00:00Z", "2026-12-01T10:03:07Z"},
		{"on the second", "2026-12-01T10:00:00Z", "2026-12-01T10:00:00Z", "2026-12-01T09:59:59Z", "2026-12-01T10:00:00Z"},
		{"another zone", "2026-12-01T11:00:00.5+01:00", "2026-12-01T11:00:02+01:00", "2026-12-01T10:00:00Z", "2026-12-01T10:00:02Z"},
	} {
		started, ended := gateWindow(at(tc.start), at(tc.end))
		if got := started.Format(time.RFC3339); got != tc.wantStart {
			t.Errorf("%s: started %s, want %s", tc.name, got, tc.wantStart)
		}
		if got := ended.Format(time.RFC3339); got != tc.wantEnded {
			t.Errorf("%s: ended %s, want %s", tc.name, got, tc.wantEnded)
		}
		if !started.Before(ended) || ended.After(at(tc.end)) {
			t.Errorf("%s: the window %v–%v must run forward and end by %s", tc.name, started, ended, tc.end)
		}
	}
}
