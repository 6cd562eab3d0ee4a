package chain

import (
	"strconv"
	"strings"
	"testing"

	"github.com/m1nd/m1nd/rules"
)

const foldHead = "0123456789abcdef0123456789abcdef01234567"

func foldJSON(fold int, entries ...string) string {
	return `{"schema":"m1nd-archive-v0","fold":` + strconv.Itoa(fold) + `,"folded":[` + strings.Join(entries, ",") + `]}`
}

func foldEntry(id, phase string) string {
	return `{"mission_id":"` + id + `","head":"` + foldHead + `","phase":"` + phase + `","block_id":"sb_x","updated_at":"2026-07-09T10:00:00Z"}`
}

func TestDecodeFold(t *testing.T) {
	cases := []struct {
		name string
		body string
		code rules.Code // "" when it decodes
	}{
		{"the opening", foldJSON(0), ""},
		{"one landed", foldJSON(1, foldEntry("msn_0123456789ab", PhaseLanded)), ""},
		{"two, ordered", foldJSON(2, foldEntry("msn_0123456789ab", PhaseArchived), foldEntry("msn_0123456789ac", PhaseLanded)), ""},
		{"out of order", foldJSON(2, foldEntry("msn_0123456789ac", PhaseLanded), foldEntry("msn_0123456789ab", PhaseLanded)), rules.InvalidLetter},
		{"twice", foldJSON(2, foldEntry("msn_0123456789ab", PhaseLanded), foldEntry("msn_0123456789ab", PhaseLanded)), rules.InvalidLetter},
		{"a judging mission", foldJSON(1, foldEntry("msn_0123456789ab", PhaseJudging)), rules.InvalidTransition},
		{"a bad id", foldJSON(1, foldEntry("msn_XYZ", PhaseLanded)), rules.InvalidLetter},
		{"fold 0 folding something", foldJSON(0, foldEntry("msn_0123456789ab", PhaseLanded)), rules.InvalidLetter},
		{"fold 1 folding nothing", foldJSON(1), rules.InvalidLetter},
		{"a negative fold", foldJSON(-1), rules.InvalidLetter},
		{"another schema", strings.Replace(foldJSON(0), "m1nd-archive-v0", "m1nd-archive-v9", 1), rules.SchemaMismatch},
		{"a bad head", strings.Replace(foldJSON(1, foldEntry("msn_0123456789ab", PhaseLanded)), foldHead, "HEAD", 1), rules.InvalidLetter},
		{"not canonical", strings.Replace(foldJSON(0), `"fold":0`, `"fold": 0`, 1), rules.InvalidLetter},
		{"an unknown key", strings.Replace(foldJSON(0), `"fold":0`, `"fold":0,"extra":1`, 1), ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f, err := DecodeFold([]byte(tc.body))
			if tc.name == "an unknown key" { // whatever it says, it is a refusal, never a fold
				if err == nil {
					t.Fatalf("decoded %+v from a fold with an unknown key", f)
				}
				return
			}
			if tc.code == "" {
				if err != nil {
					t.Fatalf("DecodeFold: %v", err)
				}
				if string(f.Canonical()) != tc.body {
					t.Fatalf("canonical %s, want %s", f.Canonical(), tc.body)
				}
				return
			}
			r, ok := rules.AsRefusal(err)
			if !ok || r.Code != tc.code {
				t.Fatalf("DecodeFold = %v, want %s", err, tc.code)
			}
		})
	}
}

// FuzzDecodeFold: decoding a fold never panics; what it refuses is a
// known refusal, and what it accepts is canonical and decodes again to
// the same fold.
func FuzzDecodeFold(f *testing.F) {
	f.Add([]byte(foldJSON(0)))
	f.Add([]byte(foldJSON(1, foldEntry("msn_0123456789ab", PhaseLanded))))
	f.Add([]byte(foldJSON(2, foldEntry("msn_0123456789ab", PhaseArchived), foldEntry("msn_0123456789ac", PhaseLanded))))
	f.Add([]byte(`{"schema":"m1nd-archive-v0","fold":1,"folded":null}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		fold, err := DecodeFold(data)
		if err != nil {
			if r, ok := rules.AsRefusal(err); !ok || !rules.Known(r.Code) {
				t.Fatalf("not a known refusal: %v", err)
			}
			return
		}
		if string(fold.Canonical()) != string(data) {
			t.Fatalf("accepted non-canonical bytes %q (canonical %q)", data, fold.Canonical())
		}
		if _, err := DecodeFold(fold.Canonical()); err != nil {
			t.Fatalf("its canonical bytes do not decode: %v", err)
		}
	})
}
