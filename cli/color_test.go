package cli

import (
	"strings"
	"testing"
)

func TestColorOn(t *testing.T) {
	for _, tc := range []struct {
		mode, noColor, term string
		tty, want, bad      bool
	}{
		{mode: "auto", tty: true, term: "xterm", want: true},
		{mode: "", tty: true, term: "xterm", want: true},
		{mode: "auto", tty: false, term: "xterm", want: false},
		{mode: "auto", tty: true, noColor: "1", term: "xterm", want: false},
		{mode: "auto", tty: true, term: "dumb", want: false},
		{mode: "always", tty: false, noColor: "1", want: true},
		{mode: "never", tty: true, term: "xterm", want: false},
		{mode: "sometimes", bad: true},
	} {
		got, err := colorOn(tc.mode, tc.noColor, tc.term, tc.tty)
		if (err != nil) != tc.bad || got != tc.want {
			t.Errorf("colorOn(%q, NO_COLOR=%q, TERM=%q, tty %v) = %v, %v; want %v (error: %v)", tc.mode, tc.noColor, tc.term, tc.tty, got, err, tc.want, tc.bad)
		}
	}
}

func TestLiftColor(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"m1nd mission heads --color=never", "m1nd --color=never mission heads"},
		{"m1nd mission heads --color always --json", "m1nd --color=always mission heads --json"},
		{"m1nd --color=auto status", "m1nd --color=auto status"},
		{"m1nd mission show ID -- --color=never", "m1nd mission show ID -- --color=never"},
		{"m1nd status", "m1nd status"},
	} {
		if got := strings.Join(liftColor(strings.Fields(tc.in)), " "); got != tc.want {
			t.Errorf("liftColor(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestPaintKeepsColumns(t *testing.T) {
	plain := paint(false, "32", "landed", 10)
	coloured := paint(true, "32", "landed", 10)
	if plain != "landed    " || coloured != "\x1b[32mlanded\x1b[0m    " {
		t.Fatalf("paint: %q, %q", plain, coloured)
	}
}

func TestResolveID(t *testing.T) {
	ids := []string{"msn_89d7aaaaaaaa", "msn_89d7bbbbbbbb", "msn_1234cccccccc"}
	for _, tc := range []struct{ typed, want, err string }{
		{"msn_1", "msn_1234cccccccc", ""},
		{"msn_89d7a", "msn_89d7aaaaaaaa", ""},
		{"msn_89d7bbbbbbbb", "msn_89d7bbbbbbbb", ""},
		{"msn_89", "", `"msn_89" is ambiguous: 2 missions start with it (msn_89d7aaaaaaaa, msn_89d7bbbbbbbb); type more of it`},
		{"msn_ff", "", `no mission starts with "msn_ff"`},
	} {
		got, err := resolveID("mission", tc.typed, ids)
		msg := ""
		if err != nil {
			msg = err.Error()
		}
		if got != tc.want || msg != tc.err {
			t.Errorf("resolveID(%q) = %q, %q; want %q, %q", tc.typed, got, msg, tc.want, tc.err)
		}
	}
}
