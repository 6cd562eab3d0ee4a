package gitsync

import (
	"fmt"
	"slices"
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
			batches := splitBatches(tc.push, MaxBatch)
			if len(batches) != 1 {
				t.Fatalf("%d batches for %d refs", len(batches), len(tc.push))
			}
			args, glob := pushArgs("origin", batches[0], tc.exclude)
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

// More refs than a batch holds are cut into batches of at most the limit,
// carried by globs on their ids' first characters, every ref in exactly
// one batch, the refs directly under refs/m1nd/ in the first.
func TestSplitBatches(t *testing.T) {
	const m = "refs/m1nd/missions/"
	for _, tc := range []struct {
		name  string
		n     int // missions
		limit int
		want  int // batches
	}{
		{"fits", 10, 500, 1},
		{"just over", 501, 500, 2},
		{"many", 1200, 500, 3},
		{"a small limit splits deeper", 300, 10, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			push := []string{"refs/m1nd/store"}
			for i := 0; i < tc.n; i++ {
				push = append(push, fmt.Sprintf("%smsn_%012x", m, uint64(i)*0x9e3779b97f4a7c15>>16))
			}
			push = append(push, "refs/m1nd/mail/bob/alice")
			batches := splitBatches(push, tc.limit)
			if tc.want > 0 && len(batches) != tc.want {
				t.Errorf("%d batches, want %d", len(batches), tc.want)
			}
			var all []string
			for i, b := range batches {
				if len(b.refs) > tc.limit {
					t.Errorf("batch %d holds %d refs, over %d", i, len(b.refs), tc.limit)
				}
				for _, ref := range b.refs {
					covered := !strings.HasPrefix(ref, m) && !strings.HasPrefix(ref, "refs/m1nd/mail/")
					for _, p := range b.prefixes {
						covered = covered || strings.HasPrefix(ref, p)
					}
					if !covered {
						t.Errorf("batch %d: %s is neither named nor under its globs %v", i, ref, b.prefixes)
					}
				}
				// A glob of one batch carries no ref of another.
				for j, other := range batches {
					for _, ref := range other.refs {
						for _, p := range b.prefixes {
							if j != i && strings.HasPrefix(ref, p) {
								t.Errorf("batch %d's glob %s* carries %s of batch %d", i, p, ref, j)
							}
						}
					}
				}
				all = append(all, b.refs...)
			}
			if !slices.Contains(batches[0].refs, "refs/m1nd/store") {
				t.Errorf("the store is not in the first batch")
			}
			slices.Sort(all)
			want := slices.Clone(push)
			slices.Sort(want)
			if !slices.Equal(all, want) {
				t.Errorf("the batches carry %d refs, want the %d pushed, each once", len(all), len(want))
			}
		})
	}
}

func TestCutShort(t *testing.T) {
	for said, want := range map[string]bool{
		"error: RPC failed; HTTP 504 curl 22 The requested URL returned error: 504":                  true,
		"fatal: the remote end hung up unexpectedly":                                                 true,
		"fatal: unable to access 'http://127.0.0.1:1/a.git/': The requested URL returned error: 504": true,
		"send-pack: unexpected disconnect while reading sideband packet":                             true,
		"! [remote rejected] refs/m1nd/store -> refs/m1nd/store (pre-receive hook declined)":         false,
		"! [rejected] refs/m1nd/missions/msn_1 (fetch first)":                                        false,
	} {
		if got := cutShort(said); got != want {
			t.Errorf("cutShort(%q) = %v, want %v", said, got, want)
		}
	}
}
