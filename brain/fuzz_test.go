package brain

import (
	"strings"
	"testing"

	"github.com/m1nd/m1nd/gates"
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
			r, ok := gates.AsRefusal(err)
			if !ok || r.Code != gates.CandidateEditRejected || !strings.HasPrefix(r.Lesson, "candidate_edit rejected") {
				t.Fatalf("refusal %v", err)
			}
			return
		}
		if len(ops) == 0 || len(ops) > MaxOps {
			t.Fatalf("%d ops accepted", len(ops))
		}
		for i, op := range ops {
			if _, ok := opFields[op.Op]; !ok || op.Index != i {
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
