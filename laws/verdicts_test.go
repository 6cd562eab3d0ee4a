package laws

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/m1nd/m1nd/gitstore"
	"github.com/m1nd/m1nd/testkit/gittest"
)

// FuzzVerdictsLoad: whatever the verdicts file holds, reading it never
// panics, and it keeps only entries it could read whole; a damaged file
// is dropped (judged afresh), never half-read.
func FuzzVerdictsLoad(f *testing.F) {
	h := strings.Repeat("a", 40)
	f.Add("store " + h + " keys " + h + "\nrefs/m1nd/missions/msn_0123456789ab " + h + " s\n")
	f.Add("store " + h + " keys " + h + "\nrefs/m1nd/store " + h + " k " + h + " landed_law a lesson with spaces\n")
	f.Add("junk")
	g := gittest.Init(f, "v")
	repo, err := gitstore.Open(g.Dir)
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { repo.Close() })
	path := VerdictsPath(repo.RuntimeDir())
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data string) {
		if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
		v := OpenVerdicts(repo)
		for ref, e := range v.entries {
			if ref == "" || e.head.IsZero() && !strings.Contains(data, strings.Repeat("0", 40)) {
				t.Fatalf("%q: kept an entry %q %+v", data, ref, e)
			}
		}
	})
}
