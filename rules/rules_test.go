package rules

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestEveryCodeHasAOneLineLesson(t *testing.T) {
	seen := map[Code]bool{}
	for _, l := range defaultLessons {
		code, lesson := l.code, l.lesson
		if seen[code] {
			t.Errorf("%s: twice", code)
		}
		seen[code] = true
		if lesson == "" || strings.ContainsAny(lesson, "\n\r") {
			t.Errorf("%s: lesson %q must be one non-empty line", code, lesson)
		}
	}
	// DESIGN §5 lists 22, and names merge_conflict as one to add; the
	// landing (§10, issue 14) added it and worktree_dirty; the views that
	// mark broken history (issue 24) added broken_history, and the landing
	// of what was gated (issue 25) stale_gate; a gate's proven word and
	// each agent's own records (issue 36) unproven_gate and not_your_agent.
	if len(defaultLessons) != 28 {
		t.Errorf("%d codes, DESIGN §5 lists 22, the landing adds 2, broken history 1, stale gates 1, proven gates and own records 2", len(defaultLessons))
	}
}

func TestEnvelopeShape(t *testing.T) {
	b, err := json.Marshal(Refuse(StaleHead, "prev_letter_id").Envelope())
	if err != nil {
		t.Fatal(err)
	}
	want := `{"ok":false,"refused":"stale_head","field":"prev_letter_id","lesson":"` + Lesson(StaleHead) + `"}`
	if string(b) != want {
		t.Fatalf("envelope = %s\nwant %s", b, want)
	}
	b, _ = json.Marshal(Refuse(NoStore, "").Envelope())
	if strings.Contains(string(b), "field") {
		t.Fatalf("empty field must be absent: %s", b)
	}
}

func TestHTTPStatus(t *testing.T) {
	for code, want := range map[Code]int{
		StaleHead: 409, StoreVersionConflict: 409, StaleScope: 409, MergeConflict: 409, WorktreeDirty: 409, BrokenHistory: 409, StaleGate: 409,
		HumanGestureRequired: 403, ReadOnlyOwner: 403, UnpinnedRunner: 403, WorkspaceNotAllowed: 403,
		InvalidLetter: 422, SchemaMismatch: 422, LandedLaw: 422, UnknownMission: 422,
	} {
		if got := HTTPStatus(code); got != want {
			t.Errorf("HTTPStatus(%s) = %d, want %d", code, got, want)
		}
	}
}

func TestRequireHumanOrigin(t *testing.T) {
	for origin, ok := range map[string]bool{"human-tty": true, "human-passkey": true, "human-ui": false, "": false, "runnerd": false, "Human-TTY": false, "human-touchid": false, "human-tty ": false} {
		err := RequireHumanOrigin(origin, "archived_via")
		if (err == nil) != ok {
			t.Errorf("origin %q: err = %v", origin, err)
		}
		if r, isRefusal := AsRefusal(err); err != nil && (!isRefusal || r.Code != HumanGestureRequired || r.Field != "archived_via") {
			t.Errorf("origin %q: refusal = %+v", origin, r)
		}
	}
}

func TestDisplayNameProblem(t *testing.T) {
	for name, ok := range map[string]bool{
		"Repo-B1": true, "m1nd": true, "my repo": true, "C": true,
		"": false, "  ": false, ".": false, "..": false, "a/b": false, `a\b`: false, "~x": false,
		"C:repo": false, "c:": false, "a\tb": false, "a\x7fb": false,
	} {
		if got := DisplayNameProblem(name) == ""; got != ok {
			t.Errorf("DisplayNameProblem(%q) ok = %v, want %v", name, got, ok)
		}
	}
}

func TestIsToken(t *testing.T) {
	for _, tt := range []struct {
		s          string
		digitFirst bool
		extra      string
		max        int
		want       bool
	}{
		{"note", false, "_-", 32, true},
		{"9note", false, "_-", 32, false},
		{"9note", true, "_-", 32, true},
		{"a_b-c", false, "_-", 32, true},
		{"a.b", false, "_-", 32, false},
		{"Note", false, "_-", 32, false},
		{"", false, "", 32, false},
		{"abcd", false, "", 3, false},
		{"jira.cloud", true, "._-", 64, true},
		{"é", false, "", 8, false},
	} {
		if got := IsToken(tt.s, tt.digitFirst, tt.extra, tt.max); got != tt.want {
			t.Errorf("IsToken(%q, %v, %q, %d) = %v", tt.s, tt.digitFirst, tt.extra, tt.max, got)
		}
	}
}

func TestCommitDates(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		label string
		when  time.Time
		ok    bool
	}{
		{"now", now, true},
		{"the epoch", time.Unix(0, 0), true},
		{"a second before the epoch", time.Unix(-1, 0), false},
		{"a day ahead", now.Add(MaxClockSkew), true},
		{"a day and a second ahead", now.Add(MaxClockSkew + time.Second), false},
		{"year 9999", time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC), false},
	} {
		err := CheckCommitDate(tt.when, now)
		if r, refused := AsRefusal(err); tt.ok == refused || (refused && r.Code != InvalidLetter) {
			t.Errorf("%s: %v", tt.label, err)
		}
	}
	for value, ok := range map[string]bool{
		"2026-07-09T12:00:00Z": true, "1970-01-01T00:00:00Z": true, "1969-12-31T23:59:59Z": false,
		"1970-01-01T00:59:59+01:00": false, "2026-07-09": false, "": false,
	} {
		if ValidDocTime(value) != ok {
			t.Errorf("ValidDocTime(%q) = %v", value, !ok)
		}
	}
}
