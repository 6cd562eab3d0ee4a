package gitsync

import (
	"strings"
	"testing"
)

func TestPushArgs(t *testing.T) {
	const m = "refs/m1nd/missions/"
	for _, tc := range []struct {
		name          string
		push, exclude []string
		want          string
		glob          bool
	}{
		{"one glob per namespace, the store named", []string{"refs/m1nd/store", m + "msn_1", m + "msn_2", "refs/m1nd/mail/x/y"}, nil,
			"refs/m1nd/mail/*:refs/m1nd/mail/* " + m + "*:" + m + "* refs/m1nd/store:refs/m1nd/store", true},
		{"held refs become negatives in a globbed namespace only", []string{m + "msn_1", m + "msn_2"}, []string{m + "msn_3", "refs/m1nd/atlas/d"},
			m + "*:" + m + "* ^" + m + "msn_3", true},
		{"as many held as pushed: named one by one", []string{m + "msn_1"}, []string{m + "msn_3"},
			m + "msn_1:" + m + "msn_1", false},
		{"only refs directly under refs/m1nd/: named", []string{"refs/m1nd/store"}, nil,
			"refs/m1nd/store:refs/m1nd/store", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args, glob := pushArgs("origin", tc.push, tc.exclude)
			if got := strings.Join(args[4:], " "); got != tc.want || glob != tc.glob {
				t.Fatalf("pushArgs = %q (glob %v), want %q (glob %v)", got, glob, tc.want, tc.glob)
			}
			if strings.Join(args[:4], " ") != "push --atomic --porcelain origin" {
				t.Fatalf("pushArgs = %q", args)
			}
			for _, a := range args {
				if strings.Contains(a, "conflicts") || strings.HasPrefix(a, "+") || strings.Contains(a, "force") {
					t.Fatalf("pushArgs forces or carries conflicts: %q", args)
				}
			}
		})
	}
}
