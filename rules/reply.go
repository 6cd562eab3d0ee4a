package rules

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
)

// The reply envelope. Every surface (the CLI's --json, the tray's HTTP
// API, MCP tool results) answers a success as one JSON object whose first
// member is "ok", and a refusal as the Refusal envelope. EncodeReply is the
// one encoder behind all three; Success puts a plain result in the
// envelope, so a result need not carry an ok of its own.
//
// What a value is to the envelope is said by its type, never read from
// its tags: an Appender writes its own bytes, envelope included; an
// Enveloped result says its own ok; a map may hold "ok"; any other result
// is an object whose members follow "ok":true.

// Appender is a reply that writes its own JSON, envelope and all ("ok"
// its first member), the same bytes encoding/json would: one too large to
// encode again (mission heads, 35 MB for 100,000 letters).
type Appender interface {
	AppendJSON(b []byte) []byte
}

// Enveloped is a result that says its own ok, as a member of its own
// (a sync's report, which can say false; a refusal; runnerd's answers):
// Success leaves it as it is.
type Enveloped interface {
	EnvelopeOK() bool
}

// EncodeReply encodes v as the surfaces answer it, without a trailing new
// line and without escaping HTML: an Appender's own bytes; a map whose
// "ok" is set with "ok" first, then the rest in key order (as
// encoding/json orders a map); anything else as encoding/json writes it.
func EncodeReply(v any) ([]byte, error) {
	switch r := v.(type) {
	case Appender:
		return r.AppendJSON(nil), nil
	case success:
		return r.encode()
	case map[string]any:
		if _, has := r["ok"]; has {
			return okFirst(r)
		}
	}
	return encode(v)
}

// Success is the envelope of a successful result: "ok":true, then the
// members of v, which encodes as a JSON object. An Appender, an Enveloped
// result and a map that holds "ok" say ok themselves and encode as they
// are: wrapped once, never twice.
func Success(v any) any { return success{v} }

type success struct{ v any }

// MarshalJSON is the envelope inside another reply.
func (s success) MarshalJSON() ([]byte, error) { return s.encode() }

// encode is the result's encoding in the envelope.
func (s success) encode() ([]byte, error) {
	switch r := s.v.(type) {
	case Appender, Enveloped:
		return EncodeReply(r)
	case map[string]any:
		if _, has := r["ok"]; !has {
			r = maps.Clone(r)
			r["ok"] = true
		}
		return okFirst(r)
	}
	b, err := encode(s.v)
	if err != nil {
		return nil, err
	}
	return envelop(b)
}

// envelop is the envelope of a result encoded as obj: an object whose
// members are "ok":true and then obj's, in their order, each as obj has
// it. A result with a member "ok" of its own must say so (Enveloped).
func envelop(obj []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(obj))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, fmt.Errorf("reply envelope: a result encodes as an object, not %.20s", obj)
	}
	out := append(make([]byte, 0, len(obj)+len(`"ok":true,`)), `{"ok":true`...)
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("reply envelope: %w", err)
		}
		name, _ := tok.(string)
		if name == "ok" {
			return nil, fmt.Errorf(`reply envelope: a result with its own "ok" says so (rules.Enveloped)`)
		}
		var value json.RawMessage
		if err := dec.Decode(&value); err != nil {
			return nil, fmt.Errorf("reply envelope: %w", err)
		}
		key, err := encode(name)
		if err != nil {
			return nil, err
		}
		out = append(append(append(append(out, ','), key...), ':'), value...)
	}
	return append(out, '}'), nil
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
