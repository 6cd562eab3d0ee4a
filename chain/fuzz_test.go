package chain

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/m1nd/m1nd/rules"
)

// fuzzSeeds are letters from the tests: valid ones and near misses.
var fuzzSeeds = []string{
	baseLetter,
	`{"schema":"m1nd-mission-letter-v0","mission_id":"msn_0123456789ab","mission_seq":4,"prev_letter_id":"0123456789ab","block_id":"sb_x","brain_ref":"b","seat":"hand","runner_id":"r1","capability":"build-runner","phase":"merge_wait","verdict":{"decision":"APPROVE","gist":"ok"},"gate":{"command":"go test ./...","exit_status":0,"artifact_hash":"sha256:abababababababababababababababababababababababababababababababab"},"receipt_candidate":{"block_id":"sb_x","type":"test","scope":{"boundary_version":1,"contract_version":1},"evidence":{"artifact_hash":"sha256:ab","evidence_refs":["gate://msn_0123456789ab"]}},"packet_ref":"sha256:abababababababababababababababababababababababababababababababab","synthetic":true,"tokens_total":12,"started_at":"2026-07-09T12:00:00Z","updated_at":"2026-07-09T12:00:00Z"}`,
	`{"schema":"m1nd-mission-letter-v0","phase":"landed","receipt":{"imported":true,"store_version":3}}`,
	`{"Phase":"archived"}`,
	`{"schema":"x"}`,
	`[]`, `null`, `{`, `{"a":1,"a":2}`,
}

// FuzzDecodeLetter: decoding never panics; anything accepted has canonical
// bytes that decode to the same canonical bytes (so the letter id is
// stable), and validation of it never panics and refuses only with a
// known code.
func FuzzDecodeLetter(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		l, err := DecodeLetter(data)
		if err != nil {
			r, ok := rules.AsRefusal(err)
			if !ok || !rules.Known(r.Code) {
				t.Fatalf("decode error is not a known refusal: %v", err)
			}
			return
		}
		canon := l.Canonical()
		again, err := DecodeLetter(canon)
		if err != nil {
			t.Fatalf("canonical bytes do not decode: %v\n%s", err, canon)
		}
		if !bytes.Equal(again.Canonical(), canon) {
			t.Fatalf("canonical bytes are not a fixed point:\n%s\n%s", canon, again.Canonical())
		}
		if err := Validate(l); err != nil {
			if r, ok := rules.AsRefusal(err); !ok || !rules.Known(r.Code) {
				t.Fatalf("validate error is not a known refusal: %v", err)
			}
		}
	})
}

// FuzzAgentID: every valid agent id maps to a ref-safe name and back.
func FuzzAgentID(f *testing.F) {
	for _, s := range []string{"owner", "runnerd:r1", "a.b_c-d", "Runnerd:x", "runnerd:runnerd:x", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, id string) {
		name, err := AgentRefName(id)
		if err != nil {
			return
		}
		if bytes.ContainsAny([]byte(name), ":/ \\~^?*[") {
			t.Fatalf("ref name %q is not ref-safe", name)
		}
		back, err := AgentFromRefName(name)
		if err != nil || back != id {
			t.Fatalf("round trip %q -> %q -> %q (%v)", id, name, back, err)
		}
	})
}

// FuzzMissionID: an accepted mission id is always a safe ref component.
func FuzzMissionID(f *testing.F) {
	for _, s := range []string{"msn_0123456789ab", "msn_../../../x", "msn_0123456789AB"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, id string) {
		ref, err := MissionRef(id)
		if err != nil {
			return
		}
		if len(id) != 16 || bytes.ContainsAny([]byte(id), "./\\") || ref != MissionRefPrefix+id {
			t.Fatalf("accepted %q", id)
		}
	})
}

// FuzzStoredLetterFastPath: a stored letter the fast path accepts is one
// the strict path accepts, as the same letter; and whatever the strict path
// accepts, the fast path does too (so verify judges as before).
func FuzzStoredLetterFastPath(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fast, fastOK := decodeCanonicalLetter(data)
		strict, err := decodeStoredLetterStrictly(data)
		if fastOK {
			if Validate(fast) != nil {
				return // refused by validation on both paths alike
			}
			if err != nil {
				t.Fatalf("fast path accepts what the strict one refuses (%v):\n%s", err, data)
			}
			if !bytes.Equal(strict.Canonical(), fast.Canonical()) {
				t.Fatalf("the paths read different letters:\n%s", data)
			}
		} else if err == nil {
			t.Fatalf("the strict path accepts what the fast one does not:\n%s", data)
		}
	})
}

// FuzzIsCompactJSON: for valid JSON, isCompactJSON says exactly whether
// json.Compact would change the bytes.
func FuzzIsCompactJSON(f *testing.F) {
	for _, s := range append(fuzzSeeds, `{"a": 1}`, `{"a":"x y\"z \\"}`, "[1,\n2]", `"\\\\" `, `{"k":"\t"}`) {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if !json.Valid(data) {
			return
		}
		var compact bytes.Buffer
		if err := json.Compact(&compact, data); err != nil {
			t.Fatal(err)
		}
		if got, want := isCompactJSON(data), bytes.Equal(compact.Bytes(), data); got != want {
			t.Fatalf("isCompactJSON(%q) = %v, want %v", data, got, want)
		}
	})
}

// FuzzReadHeadFacts: for any input, the phase and sequence read by the
// hand scanner are what encoding/json reads, and it fails where
// encoding/json fails.
func FuzzReadHeadFacts(f *testing.F) {
	for _, s := range append(fuzzSeeds, `{"phase":"x","mission_seq":3}`, `{"a":{"phase":"no"},"phase" : "yes" , "mission_seq":1e2}`,
		`{"ph\u0061se":"esc","mission_seq":2}`, `{"phase":5}`, `{"mission_seq":"7"}`, `[1]`, `{"phase":"a","phase":"b"}`, `{}`, "{\"pha\u017fe\":\"long s\"}", "{\"phase\":\"\x83\"}", "{\"mi\u017f\u017fion_seq\":9}", ` {"x":[1,{"y":"}"}],"mission_seq":-4 } `) {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, gotErr := readHeadFacts(data)
		var want headFacts
		wantErr := json.Unmarshal(data, &want)
		if (gotErr != nil) != (wantErr != nil) {
			t.Fatalf("readHeadFacts(%q): %v, encoding/json: %v", data, gotErr, wantErr)
		}
		if gotErr == nil && got != want {
			t.Fatalf("readHeadFacts(%q) = %+v, encoding/json %+v", data, got, want)
		}
	})
}
