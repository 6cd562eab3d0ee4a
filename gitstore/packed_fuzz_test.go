package gitstore

import (
	"bytes"
	"slices"
	"strings"
	"testing"
)

// FuzzFindPackedRef: looking a ref up in any packed-refs bytes never
// panics, and in sorted data the binary search finds what a line scan
// finds.
func FuzzFindPackedRef(f *testing.F) {
	h := strings.Repeat("ab", 20)
	sorted := "# pack-refs with: peeled fully-peeled sorted \n" +
		h + " refs/heads/main\n" + h + " refs/m1nd/missions/msn_000000000001\n" +
		h + " refs/tags/v1\n^" + h + "\n" + h + " refs/tags/v2\n"
	for _, name := range []string{"refs/heads/main", "refs/m1nd/missions/msn_000000000001", "refs/tags/v1", "refs/tags/v2", "refs/zz", "refs/a"} {
		f.Add([]byte(sorted), name)
	}
	f.Add([]byte("# pack-refs with: sorted\n^\n^x\n"), "refs/a")
	f.Add([]byte("# pack-refs with: sorted\nshort\n"), "x")
	f.Fuzz(func(t *testing.T, data []byte, name string) {
		got, gotOK, gotErr := findPackedRef(data, name)
		header, rest, _ := bytes.Cut(data, []byte("\n"))
		if !bytes.Contains(header, []byte("sorted")) || gotErr != nil {
			return
		}
		// A line scan of the same records, when they are in order.
		var names []string
		var want Hash
		wantOK := false
		for _, line := range strings.Split(string(rest), "\n") {
			if line == "" || line[0] == '^' {
				continue
			}
			if len(line) < 42 || line[40] != ' ' {
				return // malformed: only "no panic" is asked
			}
			names = append(names, line[41:])
			if line[41:] == name {
				hh, err := ParseHash(line[:40])
				if err != nil {
					return
				}
				want, wantOK = hh, true
			}
		}
		if !slices.IsSorted(names) || len(slices.Compact(slices.Clone(names))) != len(names) {
			return
		}
		if gotOK != wantOK || got != want {
			t.Fatalf("search found %v %v, a scan %v %v, for %q in:\n%s", got, gotOK, want, wantOK, name, data)
		}
	})
}
