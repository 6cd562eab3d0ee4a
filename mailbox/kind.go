package mailbox

import (
	"fmt"

	"github.com/m1nd/m1nd/chain"
	"github.com/m1nd/m1nd/rules"
)

// Kind is mail: refs/m1nd/mail/<recipient>/<writer>, one letter per commit
// in mail.json. Each writer has its own ref, so letters stand alone and a
// lost race is appended again; a recipient may prune its mail.
var Kind = chain.Define(chain.Spec[*Letter, *Letter]{
	Shape: chain.Shape{
		Name:   "mail",
		Prefix: RefPrefix,
		ValidName: func(rest string) bool {
			_, _, ok := parseRef(RefPrefix + rest)
			return ok
		},
		File:      File,
		Deletable: true,
		Race:      chain.RaceRetry,
	},
	Decode:   decodeStored,
	Describe: describe,
	Follows:  follows,
})

// describe names a letter's commit by its id, class and addressee.
func describe(l *Letter) (string, []chain.Trailer) {
	id := l.ID()
	return fmt.Sprintf("mail %s %s to %s", id, l.Class, l.To), []chain.Trailer{{Key: "M1nd-Letter", Value: id}}
}

func decodeStored(body []byte) (*Letter, error) {
	l, err := Decode(body)
	if err == nil {
		err = Validate(l)
	}
	if err != nil {
		return nil, err
	}
	return l, nil
}

// follows: a letter stands alone, on the ref of its recipient and writer.
func follows(_, next *chain.Decoded[*Letter], _ chain.Env) error {
	l := next.Value
	if want, err := Ref(l.To, l.Agent); err != nil || want != next.Ref {
		return rules.Refusef(rules.InvalidLetter, "to", "a letter from %s to %s belongs on %s", l.Agent, l.To, want)
	}
	return nil
}
