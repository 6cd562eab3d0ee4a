package chain

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"strings"
	"unicode/utf8"

	"github.com/m1nd/m1nd/rules"
)

// LetterSchema is the one schema this m1nd speaks for mission letters.
const LetterSchema = "m1nd-mission-letter-v0"

// LetterFile is the name of the one file in a mission commit's tree.
const LetterFile = "letter.json"

// Letter is one mission letter. Field order is the canonical key order
// (seed §1); optional fields are absent when unset and synthetic is written
// only when true, so the canonical bytes are a pure function of the meaning.
type Letter struct {
	Schema           string            `json:"schema"`
	MissionID        string            `json:"mission_id"`
	MissionSeq       int64             `json:"mission_seq"`
	PrevLetterID     *string           `json:"prev_letter_id,omitempty"`
	BlockID          string            `json:"block_id"`
	BrainRef         string            `json:"brain_ref"`
	Seat             string            `json:"seat"`
	RunnerID         *string           `json:"runner_id,omitempty"`
	Capability       string            `json:"capability"`
	Phase            string            `json:"phase"`
	Verdict          *Verdict          `json:"verdict,omitempty"`
	Gate             *Gate             `json:"gate,omitempty"`
	ReceiptCandidate *ReceiptCandidate `json:"receipt_candidate,omitempty"`
	Receipt          *Receipt          `json:"receipt,omitempty"`
	PacketRef        *string           `json:"packet_ref,omitempty"`
	Synthetic        bool              `json:"synthetic,omitempty"`
	TokensTotal      *int64            `json:"tokens_total,omitempty"`
	StartedAt        string            `json:"started_at"`
	UpdatedAt        string            `json:"updated_at"`
}

// Verdict is a judgement on the mission.
type Verdict struct {
	Decision string `json:"decision"`
	Gist     string `json:"gist,omitempty"`
}

// Gate is the proof command a runner ran and the hash of its full log.
type Gate struct {
	Command      string `json:"command"`
	ExitStatus   *int64 `json:"exit_status,omitempty"`
	ArtifactHash string `json:"artifact_hash"`
}

// ReceiptCandidate is evidence proposed for import into the brain store.
// Only a human's receipt import turns it into a receipt; it never colours a
// block by itself (law 1c). Its shape and evidence contract are the store's
// receipt, so both live in gates.
type ReceiptCandidate = rules.Receipt

// Receipt records that the candidate was imported into the store.
type Receipt struct {
	Imported     bool  `json:"imported"`
	StoreVersion int64 `json:"store_version"`
}

// DecodeLetter parses a submitted letter strictly: valid UTF-8, one JSON
// object, no unknown, misspelt (JSON keys are case-sensitive here) or
// duplicated fields, values of the right types. Anything else is an
// invalid_letter refusal naming the field. A schema other than v0 is a
// schema_mismatch before its fields are looked at. Laws are checked by
// Validate, not here.
func DecodeLetter(data []byte) (*Letter, error) {
	if !utf8.Valid(data) {
		return nil, rules.Refusef(rules.InvalidLetter, "", "the letter is not valid UTF-8 text")
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) && typeErr.Field == "" {
			return nil, rules.Refusef(rules.InvalidLetter, "", "a letter is a JSON object, not a JSON %s", typeErr.Value)
		}
		return nil, jsonRefusal(err)
	}
	if top == nil {
		return nil, rules.Refusef(rules.InvalidLetter, "", "a letter is a JSON object, not null")
	}
	var schema string
	if raw, ok := top["schema"]; !ok {
		return nil, rules.Refusef(rules.SchemaMismatch, "schema", "the letter has no \"schema\"; a mission letter says \"schema\":%q", LetterSchema)
	} else if json.Unmarshal(raw, &schema) != nil || schema != LetterSchema {
		return nil, rules.Refusef(rules.SchemaMismatch, "schema", "schema %s is not %q; this m1nd speaks only the v0 mission letter", rules.Clip(string(raw)), LetterSchema)
	}
	if err := checkKeys(data, reflect.TypeOf(Letter{})); err != nil {
		return nil, err
	}
	var l Letter
	if err := json.Unmarshal(data, &l); err != nil {
		return nil, jsonRefusal(err)
	}
	return &l, nil
}

func jsonRefusal(err error) error {
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) {
		return rules.Refusef(rules.InvalidLetter, typeErr.Field, "field %q must be a JSON %s, not %s", typeErr.Field, jsonKind(typeErr.Type), typeErr.Value)
	}
	return rules.Refusef(rules.InvalidLetter, "", "the letter is not valid JSON: %s", err)
}

func jsonKind(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "string"
	case reflect.Int64, reflect.Int:
		return "integer"
	case reflect.Bool:
		return "boolean"
	case reflect.Slice:
		return "array"
	case reflect.Struct:
		return "object"
	}
	return t.Kind().String()
}

// checkKeys walks the JSON token stream and refuses object keys that the
// Go type t does not declare with exactly that spelling, and duplicates.
// encoding/json would otherwise match keys case-insensitively and keep the
// last duplicate, so two different documents would share canonical bytes.
func checkKeys(data []byte, t reflect.Type) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := walkValue(dec, t, ""); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return rules.Refusef(rules.InvalidLetter, "", "the letter must be a single JSON object with nothing after it")
	}
	return nil
}

func walkValue(dec *json.Decoder, t reflect.Type, path string) error {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	tok, err := dec.Token()
	if err != nil {
		return jsonRefusal(err)
	}
	delim, ok := tok.(json.Delim)
	if !ok {
		return nil // scalars are type-checked by Unmarshal
	}
	switch delim {
	case '[':
		var elem reflect.Type
		if t != nil && t.Kind() == reflect.Slice {
			elem = t.Elem()
		}
		for dec.More() {
			if err := walkValue(dec, elem, path+"[]"); err != nil {
				return err
			}
		}
	case '{':
		if err := walkObject(dec, t, path); err != nil {
			return err
		}
	}
	_, err = dec.Token() // the closing delimiter
	if err != nil {
		return jsonRefusal(err)
	}
	return nil
}

// walkObject walks an object's members (its opening brace read): each key
// a field of t (when t is a struct), once, and each value as its field's.
func walkObject(dec *json.Decoder, t reflect.Type, path string) error {
	var fields map[string]reflect.Type
	if t != nil && t.Kind() == reflect.Struct {
		fields = jsonFields(t)
	}
	seen := map[string]bool{}
	for dec.More() {
		keyTok, err := dec.Token()
		if err != nil {
			return jsonRefusal(err)
		}
		key := keyTok.(string)
		field := strings.TrimPrefix(path+"."+key, ".")
		ft, known := fields[key]
		if fields != nil && !known {
			return rules.Refusef(rules.InvalidLetter, field, "unknown field %q; a v0 letter has only the fields of the schema, spelt exactly", rules.Clip(field))
		}
		if seen[key] {
			return rules.Refusef(rules.InvalidLetter, field, "field %q appears twice", rules.Clip(field))
		}
		seen[key] = true
		if err := walkValue(dec, ft, field); err != nil {
			return err
		}
	}
	return nil
}

func jsonFields(t reflect.Type) map[string]reflect.Type {
	out := make(map[string]reflect.Type, t.NumField())
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name != "" && name != "-" {
			out[name] = f.Type
		}
	}
	return out
}

// Canonical returns the letter's canonical bytes: compact JSON in schema
// key order, optional fields absent when unset, no HTML escaping.
func (l *Letter) Canonical() []byte { return CanonicalJSON(l) }

// LetterID is a mission letter's id: the DocID of its canonical bytes.
func LetterID(canonical []byte) string { return DocID(canonical) }

// ID is the letter's content id.
func (l *Letter) ID() string { return LetterID(l.Canonical()) }
