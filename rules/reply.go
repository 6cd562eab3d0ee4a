package rules

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
)

// The reply envelope. Every surface (the CLI's --json, the tray's HTTP
// API, MCP tool results) answers a success as one JSON object whose first
// member is "ok", and a refusal as the Refusal envelope. EncodeReply is the
// one encoder behind all three; Success wraps a plain result struct in the
// envelope, so a result need not carry an ok field of its own.

// Appender is a reply that writes its own JSON, the same bytes
// encoding/json would: one too large to encode again (mission heads).
type Appender interface {
	AppendJSON(b []byte) []byte
}

// EncodeReply encodes v as the surfaces answer it, without a trailing new
// line and without escaping HTML: v's own bytes when it is an Appender; a
// map whose "ok" is set with "ok" first, then the rest in key order (as
// encoding/json orders a map); anything else as encoding/json writes it.
func EncodeReply(v any) ([]byte, error) {
	if a, ok := v.(Appender); ok {
		return a.AppendJSON(nil), nil
	}
	// The envelope is written around its result's encoding, not through
	// encoding/json, which would scan and copy those bytes again (a heads
	// reply of 100,000 letters is 35 MB).
	if s, ok := v.(success); ok {
		return s.encode()
	}
	if m, isMap := v.(map[string]any); isMap {
		if _, has := m["ok"]; has {
			return okFirst(m)
		}
	}
	return encode(v)
}

// Success is the envelope of a successful result: "ok":true, then the
// members of v, which encodes as a JSON object. A v that says ok itself
// (a struct field or map key "ok", or bytes that begin with it: a sync's
// report, which can say false) encodes as it is: wrapped once, never twice.
func Success(v any) any { return success{v} }

type success struct{ v any }

// MarshalJSON is the envelope inside another reply.
func (s success) MarshalJSON() ([]byte, error) { return s.encode() }

// encode is the result's encoding in the envelope: as it is when it says
// ok itself, else with "ok":true as its first member.
func (s success) encode() ([]byte, error) {
	b, err := EncodeReply(s.v)
	if err != nil || saysOK(s.v) {
		return b, err
	}
	if len(b) < 2 || b[0] != '{' {
		return nil, fmt.Errorf("reply envelope: a result encodes as an object, not %.20s", b)
	}
	if bytes.HasPrefix(b, []byte(`{"ok":`)) {
		return b, nil // already in the envelope: wrapped once, never twice
	}
	if bytes.Equal(b, []byte("{}")) {
		return []byte(`{"ok":true}`), nil
	}
	const ok = `{"ok":true,`
	return append(append(make([]byte, 0, len(ok)+len(b)-1), ok...), b[1:]...), nil
}

// saysOK reports whether v declares its own "ok": a map key, or a field
// of the struct (or pointer to one) it is.
func saysOK(v any) bool {
	if m, ok := v.(map[string]any); ok {
		_, has := m["ok"]
		return has
	}
	t := reflect.TypeOf(v)
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil || t.Kind() != reflect.Struct {
		return false
	}
	for i := range t.NumField() {
		if name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ","); name == "ok" {
			return true
		}
	}
	return false
}

// encode is encoding/json without HTML escaping or the trailing new line.
func encode(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// okFirst encodes a map reply with its "ok" key first and the rest in key
// order.
func okFirst(m map[string]any) ([]byte, error) {
	keys := slices.DeleteFunc(slices.Sorted(maps.Keys(m)), func(k string) bool { return k == "ok" })
	b := []byte{'{'}
	for i, k := range append([]string{"ok"}, keys...) {
		if i > 0 {
			b = append(b, ',')
		}
		key, err := encode(k)
		if err != nil {
			return nil, err
		}
		val, err := encode(m[k])
		if err != nil {
			return nil, err
		}
		b = append(append(append(b, key...), ':'), val...)
	}
	return append(b, '}'), nil
}
