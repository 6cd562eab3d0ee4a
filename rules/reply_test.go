package rules

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

type appended struct{}

func (appended) AppendJSON(b []byte) []byte { return append(b, `{"ok":true,"n":1}`...) }

// bare is a self-writing reply: its bytes, envelope and all.
type bare string

func (s bare) AppendJSON(b []byte) []byte { return append(b, s...) }

// saysOK is a result that says its own ok, where it likes.
type saysOK struct {
	A  int  `json:"a"`
	OK bool `json:"ok"`
}

func (s saysOK) EnvelopeOK() bool { return s.OK }

// saysOKOmitted says its ok only when it is true.
type saysOKOmitted struct {
	OK bool `json:"ok,omitempty"`
}

func (s saysOKOmitted) EnvelopeOK() bool { return s.OK }

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
		"success of nested values": {Success(map[string]any{"x": map[string]any{"ok": 1, "<": "&"}}), `{"ok":true,"x":{"<":"&","ok":1}}`},
		"members keep their bytes": {Success(struct {
			S string            `json:"s"`
			M map[string]string `json:"m"`
			L []int             `json:"l"`
			N *int              `json:"n"`
		}{"\u2028<&>\"", map[string]string{"b<": "1", "a": "é"}, []int{}, nil}), `{"ok":true,"s":"\u2028<&>\"","m":{"a":"é","b<":"1"},"l":[],"n":null}`},
		"inside a struct":        {struct{ R any }{Success(doc{"d", "<"})}, `{"R":{"ok":true,"id":"d","text":"<"}}`},
		"a result that says ok":  {Success(saysOK{1, false}), `{"a":1,"ok":false}`},
		"a pointer that says ok": {Success(&saysOKOmitted{true}), `{"ok":true}`},
		"a map that says not ok": {Success(map[string]any{"b": 1, "ok": false}), `{"ok":false,"b":1}`},
		"a refusal":              {Success(Refusef(StaleHead, "f", "read it again").Envelope()), `{"ok":false,"refused":"stale_head","field":"f","lesson":"read it again"}`},
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
	undeclared := struct {
		A  int  `json:"a"`
		OK bool `json:"ok"`
	}{1, false}
	if b, err := EncodeReply(Success(undeclared)); err == nil {
		t.Errorf("a result with an ok it does not declare encoded as %s", b)
	}
}

// TestSuccessOfAnAppenderIsWrittenOnce: a self-writing reply's bytes are
// taken as they are (a heads reply of 100k letters is 35 MB): no copy,
// never a pass through encoding/json.
func TestSuccessOfAnAppenderIsWrittenOnce(t *testing.T) {
	big := bare(`{"ok":true,"missions":[` + strings.Repeat(`{"mission_id":"msn_0123456789ab"},`, 1000) + `{}]}`)
	wrapped := Success(big)
	if n := testing.AllocsPerRun(20, func() { EncodeReply(wrapped) }); n > 1 {
		t.Errorf("%.0f allocations for a reply already in the envelope, want 1 (its own)", n)
	}
}

// FuzzEnvelop: the envelope of any object without an "ok" is that object
// with "ok":true before its members, its members' bytes as they were.
func FuzzEnvelop(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":1}`, `{"a":{"ok":1},"b":[1,{"c":"\u2028"}]}`, `{"<":"&","é":null}`, `{"x":"a\"b"}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var v map[string]any
		if json.Unmarshal([]byte(s), &v) != nil || v == nil {
			return
		}
		if _, has := v["ok"]; has {
			return
		}
		obj, err := encode(v)
		if err != nil {
			return
		}
		got, err := envelop(obj)
		if err != nil {
			t.Fatalf("%s: %v", obj, err)
		}
		want := []byte(`{"ok":true}`)
		if !bytes.Equal(obj, []byte("{}")) {
			want = append([]byte(`{"ok":true,`), obj[1:]...)
		}
		if !bytes.Equal(got, want) || !json.Valid(got) {
			t.Fatalf("envelope of %s:\n got %s\nwant %s", obj, got, want)
		}
	})
}
