package memory

import (
	"fmt"

	"github.com/m1nd/m1nd/chain"
	"github.com/m1nd/m1nd/rules"
)

// Kind is an agent's memory: refs/m1nd/memory/<agent>, one event per
// commit in memory.json. Events name no head, so a lost race is appended
// again.
var Kind = chain.Define(chain.Spec[*Event, *Event]{
	Shape: chain.Shape{
		Name:   "memory",
		Prefix: RefPrefix,
		File:   File,
		Race:   chain.RaceRetry,
	},
	Decode: func(body []byte) (*Event, error) {
		e, err := Decode(body)
		if err == nil {
			err = Validate(e)
		}
		if err != nil {
			return nil, err
		}
		return e, nil
	},
	Describe: describeEvent,
	Follows: func(_, next *chain.Decoded[*Event], _ chain.Env) error {
		e := next.Value
		if want, err := Ref(e.Agent); err != nil || want != next.Ref {
			return rules.Refusef(rules.InvalidLetter, "agent", "a memory of %s belongs on %s", e.Agent, want)
		}
		return nil
	},
})

// AtlasKind is a shared document: refs/m1nd/atlas/<doc_id>, one version
// per commit in doc.json, each by the same publisher and proven by their
// key wherever the key is present.
var AtlasKind = chain.Define(chain.Spec[*Doc, *Doc]{
	Shape: chain.Shape{
		Name:      "atlas",
		Prefix:    AtlasPrefix,
		ValidName: ValidDocID,
		File:      AtlasFile,
		Race:      chain.RaceStale,
	},
	Decode:   DecodeDoc,
	Describe: describeDoc,
	Follows:  atlasFollows,
})

// describeEvent names a memory's commit by its id, kind and sort.
func describeEvent(e *Event) (string, []chain.Trailer) {
	id := chain.DocID(e.Canonical())
	subject := fmt.Sprintf("memory %s %s", id, e.Kind)
	if e.Sort != "" {
		subject += " " + e.Sort
	}
	return subject, []chain.Trailer{{Key: "M1nd-Letter", Value: id}}
}

// describeDoc names an atlas version by its doc, version, kind and state.
func describeDoc(d *Doc) (string, []chain.Trailer) {
	return fmt.Sprintf("atlas %s v%d %s %s", d.DocID, d.Version, d.Kind, d.State), nil
}

// atlasFollows: a version sits on its document's ref, adds 1 to the one
// before, keeps its publisher, and carries a proof that verifies with the
// publisher's key when this machine has it.
func atlasFollows(prev, next *chain.Decoded[*Doc], env chain.Env) error {
	d := next.Value
	if DocRef(d.DocID) != next.Ref {
		return rules.Refusef(rules.InvalidLetter, "doc_id", "%s does not hold this ref's document", AtlasFile)
	}
	want := int64(1)
	if prev != nil {
		p := prev.Value
		if p.Publisher != d.Publisher {
			return rules.Refusef(rules.NotPublisher, "publisher", "%s was published by %s; a version by %s is refused", d.DocID, p.Publisher, rules.Echo(d.Publisher))
		}
		want = p.Version + 1
	}
	if d.Version != want {
		return rules.Refusef(rules.InvalidLetter, "version", "each version adds 1: this one says %d, want %d", d.Version, want)
	}
	if env.RuntimeDir != "" {
		keys := Keys{Dir: KeysDir(env.RuntimeDir)}
		if proof, err := keys.CheckProof(d); err == nil && proof == ProofBad {
			return rules.Refusef(rules.BadPublisherProof, "proof", "the proof of %s v%d does not verify with %s's key", d.DocID, d.Version, d.Publisher)
		}
	}
	return nil
}
