package rules

import (
	"encoding/json"
	"strings"
	"testing"
)

type appended struct{}

func (appended) AppendJSON(b []byte) []byte { return append(b, `{"ok":true,"n":1}`...) }

// bare is a self-writing result without the envelope.
type bare string

func (s bare) AppendJSON(b []byte) []byte { return append(b, s...) }

func TestEncodeReply(t *testing.T) {
	type doc struct {
		ID   string `json:"id"`
		Text string `json:"text"`
	}
	for name, tc := range map[string]struct {
		v    any
		want string
	}{
		"struct":                   {doc{"d1", "<a & b>"}, `{"id":"d1","text":"<a & b>"}`},
		"map with ok first":        {map[string]any{"z": 1, "ok": true, "a": "x"}, `{"ok":true,"a":"x","z":1}`},
		"map without ok":           {map[string]any{"z": 1, "a": 2}, `{"a":2,"z":1}`},
		"appender":                 {appended{}, `{"ok":true,"n":1}`},
		"success":                  {Success(doc{"d1", "t"}), `{"ok":true,"id":"d1","text":"t"}`},
		"success of nothing":       {Success(struct{}{}), `{"ok":true}`},
		"success of a map":         {Success(map[string]any{"b": 1, "a": []int{}}), `{"ok":true,"a":[],"b":1}`},
		"success of a self-writer": {Success(appended{}), `{"ok":true,"n":1}`},
		"success of a bare writer": {Success(bare(`{"n":[1,2]}`)), `{"ok":true,"n":[1,2]}`},
		"success of an empty one":  {Success(bare(`{}`)), `{"ok":true}`},
		"inside a struct":          {struct{ R any }{Success(doc{"d", "<"})}, `{"R":{"ok":true,"id":"d","text":"<"}}`},
		"a result that says ok": {Success(struct {
			A  int  `json:"a"`
			OK bool `json:"ok"`
		}{1, false}), `{"a":1,"ok":false}`},
		"a pointer that says ok": {Success(&struct {
			OK bool `json:"ok,omitempty"`
		}{true}), `{"ok":true}`},
		"a map that says not ok": {Success(map[string]any{"b": 1, "ok": false}), `{"ok":false,"b":1}`},
	} {
		got, err := EncodeReply(tc.v)
		if err != nil || string(got) != tc.want {
			t.Errorf("%s: %s %v, want %s", name, got, err, tc.want)
		}
		if !json.Valid(got) {
			t.Errorf("%s: %s is not JSON", name, got)
		}
	}
	if _, err := EncodeReply(Success([]int{1})); err == nil {
		t.Error("a list wrapped in the envelope encoded")
	}
}

// TestSuccessOfAnAppenderIsWrittenOnce: the envelope of a self-writing
// result takes its bytes as they are (a heads reply of 100k letters is
// 35 MB): no copy when they begin with "ok", one when "ok" is put first,
// never a pass through encoding/json.
func TestSuccessOfAnAppenderIsWrittenOnce(t *testing.T) {
	big := bare(`{"ok":true,"missions":[` + strings.Repeat(`{"mission_id":"msn_0123456789ab"},`, 1000) + `{}]}`)
	wrapped := Success(big)
	if n := testing.AllocsPerRun(20, func() { EncodeReply(wrapped) }); n > 1 {
		t.Errorf("%.0f allocations for a reply already in the envelope, want 1 (its own)", n)
	}
	inner := bare(`{"missions":[` + strings.Repeat(`{"mission_id":"msn_0123456789ab"},`, 1000) + `{}]}`)
	wrapped = Success(inner)
	if n := testing.AllocsPerRun(20, func() { EncodeReply(wrapped) }); n > 2 {
		t.Errorf("%.0f allocations for a reply put in the envelope, want 2", n)
	}
}
