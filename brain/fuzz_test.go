package brain

import (
	"strings"
	"testing"

	"github.com/m1nd/m1nd/rules"
)

// FuzzDecodeOps: the ops decoder never panics, refuses only with
// candidate_edit_rejected, and every op it accepts is a known kind with
// its required fields.
func FuzzDecodeOps(f *testing.F) {
	for _, s := range []string{
		`[{"op":"rename","block_id":"sb_x","name":"n"}]`,
		`[{"op":"merge","into":"sb_x","block_ids":["sb_y"]}]`,
		`[{"op":"split","block_id":"sb_x","by":{"paths":[["a/"],["b/"]]}}]`,
		`[{"op":"move_member","path":"a","from":"sb_x","to":"sb_y"}]`,
		`[{"op":"resolve_seam","path":"a","resolution":"both"}]`,
		`[{"op":"assign_unmapped","path":"a","block_id":"sb_x"}]`,
		`[]`, `{}`, `[1]`, `[{"op":7}]`, `[{"op":"split","block_id":"x","by":null}]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		ops, err := DecodeOps(data)
		if err != nil {
			r, ok := rules.AsRefusal(err)
			if !ok || r.Code != rules.CandidateEditRejected || !strings.HasPrefix(r.Lesson, "candidate_edit rejected") {
				t.Fatalf("refusal %v", err)
			}
			return
		}
		if len(ops) == 0 || len(ops) > MaxOps {
			t.Fatalf("%d ops accepted", len(ops))
		}
		for i, op := range ops {
			if _, ok := specOf(op.Op); !ok || op.Index != i {
				t.Fatalf("op %d = %+v", i, op)
			}
			if op.Op == OpSplit && op.By == nil {
				t.Fatal("split without by")
			}
		}
	})
}

// FuzzMemberPattern: a pattern the validator accepts never panics the
// matcher, and a directory pattern covers what lies under it.
func FuzzMemberPattern(f *testing.F) {
	for _, s := range []string{"core/", "core/*.go", "**/x", "[", "a/**/b", "../x"} {
		f.Add(s, "core/a.go")
	}
	f.Fuzz(func(t *testing.T, pattern, file string) {
		if memberPatternProblem(pattern) != "" {
			return
		}
		matchMember(pattern, file)
		if dir, ok := strings.CutSuffix(pattern, "/"); ok && !strings.ContainsAny(dir, "*?[\\") && !matchMember(pattern, dir+"/f") {
			t.Fatalf("%q does not cover %q", pattern, dir+"/f")
		}
	})
}

// FuzzDecodeKeySet: a stored key set either decodes to one whose every
// key (held or removed) is a verifiable public key with its credential id
// once, and whose anchors name m1nd refs and commits, re-encoding to the
// same bytes; or it is refused with a code. Never a panic.
func FuzzDecodeKeySet(f *testing.F) {
	f.Add(`{"schema":"m1nd-passkeys-v0","version":1,"keys":[{"credential_id":"Y3JlZGVudGlhbC0x","public_key":"MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEq-VBTLL0GdmN0HnfAt4HQNsltrUAsZ2vHmYEQU1vjflmVO8szARS_ofk9sbppnX5YcEESgi8XRY_d1VSU3nsFQ","label":"laptop","added_at":"2026-07-09T10:00:00Z"}]}`)
	f.Add(`{"schema":"m1nd-passkeys-v0","version":2,"keys":[],"removed":[{"credential_id":"AA","public_key":"AA","added_at":"x","removed_in":2,"anchors":{"refs/m1nd/store":"` + strings.Repeat("a", 40) + `"}}],"before_first_key":{"refs/m1nd/x":"00"}}`)
	f.Add(`{}`)
	f.Fuzz(func(t *testing.T, body string) {
		k, err := DecodeKeySet([]byte(body))
		if err != nil {
			if _, ok := rules.AsRefusal(err); !ok {
				t.Fatalf("%q: not a refusal: %v", body, err)
			}
			return
		}
		if string(k.Canonical()) != body {
			t.Fatalf("%q decoded but is not its canonical bytes", body)
		}
		seen := map[string]bool{}
		for _, p := range append(append([]Passkey{}, k.Keys...), func() []Passkey {
			var out []Passkey
			for _, r := range k.Removed {
				out = append(out, r.Passkey)
			}
			return out
		}()...) {
			if seen[p.CredentialID] {
				t.Fatalf("%q: credential %s twice", body, p.CredentialID)
			}
			seen[p.CredentialID] = true
		}
	})
}

// FuzzDecodePinSet: an approved pin set decodes to its canonical bytes
// with each runner once and each pin a sha256, or is refused with a code.
func FuzzDecodePinSet(f *testing.F) {
	f.Add(`{"schema":"m1nd-runner-pins-v0","version":1,"runners":[{"id":"build-1","pin":"sha256:` + strings.Repeat("ab", 32) + `","gate_command":"go test ./...","command":["a","{packet_file}"]}]}`)
	f.Add(`{"schema":"m1nd-runner-pins-v0","version":1,"runners":[]}`)
	f.Fuzz(func(t *testing.T, body string) {
		p, err := DecodePinSet([]byte(body))
		if err != nil {
			if _, ok := rules.AsRefusal(err); !ok {
				t.Fatalf("%q: not a refusal: %v", body, err)
			}
			return
		}
		if string(p.Canonical()) != body {
			t.Fatalf("%q decoded but is not its canonical bytes", body)
		}
		seen := map[string]bool{}
		for _, r := range p.Runners {
			if seen[r.ID] || !strings.HasPrefix(r.Pin, "sha256:") || len(r.Pin) != 71 {
				t.Fatalf("%q: runner %+v", body, r)
			}
			seen[r.ID] = true
		}
	})
}

// FuzzLandingCheck: a landing record is accepted only when it names a
// mission, a letter and, with a target, a branch and three object names.
func FuzzLandingCheck(f *testing.F) {
	h := strings.Repeat("a", 40)
	f.Add("msn_0123456789ab", "0123456789ab", "main", h, h, h)
	f.Add("msn_0123456789ab", "0123456789ab", "", "", "", "")
	f.Add("msn_x", "y", "m1nd/x", "z", h, h)
	f.Fuzz(func(t *testing.T, mission, letter, target, branch, head, tree string) {
		l := &Landing{MissionID: mission, LetterID: letter, Target: target, BranchHead: branch, TargetHead: head, Tree: tree}
		err := l.Check()
		if err != nil {
			if r, ok := rules.AsRefusal(err); !ok || r.Code != rules.LandedLaw {
				t.Fatalf("%+v: %v", l, err)
			}
			return
		}
		if !strings.HasPrefix(mission, "msn_") || len(letter) != 12 || strings.HasPrefix(target, "m1nd/") || (target == "" && branch+head+tree != "") || (target != "" && (len(branch) != 40 || len(head) != 40 || len(tree) != 40)) {
			t.Fatalf("accepted %+v", l)
		}
	})
}
