package cli

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/m1nd/m1nd/chain"
	"github.com/m1nd/m1nd/gitstore"
	"github.com/m1nd/m1nd/memory"
)

// resolveID is the one of ids that starts with typed, as git takes an
// abbreviated commit: an id typed whole is itself, a prefix that starts
// one id is that id, a prefix that starts several is refused with them
// (type more of it), one that starts none is refused too.
func resolveID(what, typed string, ids []string) (string, error) {
	var found []string
	for _, id := range ids {
		if id == typed {
			return id, nil
		}
		if strings.HasPrefix(id, typed) {
			found = append(found, id)
		}
	}
	sort.Strings(found)
	switch len(found) {
	case 0:
		return "", usagef("no %s starts with %q", what, typed)
	case 1:
		return found[0], nil
	}
	shown := found
	if len(shown) > 5 {
		shown = append(shown[:5:5], fmt.Sprintf("and %d more", len(found)-5))
	}
	return "", usagef("%q is ambiguous: %d %ss start with it (%s); type more of it", typed, len(found), what, strings.Join(shown, ", "))
}

// idsUnder lists the names under a ref folder that valid accepts.
func idsUnder(repo *gitstore.Repo, prefix string, valid func(string) bool) ([]string, error) {
	refs, err := repo.ListRefs(prefix)
	if err != nil {
		return nil, err
	}
	ids := make([]string, 0, len(refs))
	for _, r := range refs {
		if id := strings.TrimPrefix(r.Name, prefix); valid(id) {
			ids = append(ids, id)
		}
	}
	return ids, nil
}

// refKind is a kind of id that names a ref: its ids are a tag and 12
// hex digits (msn_…, atl_…), under one ref folder.
type refKind struct {
	what, tag, folder string
	valid             func(string) bool
	start             *regexp.Regexp // what may start an id: the tag and a digit, or four digits
}

var (
	missionKind = refKind{"mission", "msn_", chain.MissionRefPrefix, chain.ValidMissionID, regexp.MustCompile(`^(msn_[0-9a-f]{1,12}|[0-9a-f]{4,12})$`)}
	docKind     = refKind{"document", "atl_", memory.AtlasPrefix, memory.ValidDocID, regexp.MustCompile(`^(atl_[0-9a-f]{1,12}|[0-9a-f]{4,12})$`)}
)

// resolve is the one id of kind that typed starts (with its tag or
// without), typed itself when it is whole; ok is false when typed cannot
// start one.
func (inv *invocation) resolve(k refKind, typed string) (id string, ok bool, err error) {
	if k.valid(typed) {
		return typed, true, nil
	}
	if !k.start.MatchString(typed) {
		return typed, false, nil
	}
	repo, err := inv.openRepo()
	if err != nil {
		return "", true, err
	}
	ids, err := idsUnder(repo, k.folder, k.valid)
	if err != nil {
		return "", true, err
	}
	if !strings.HasPrefix(typed, k.tag) {
		typed = k.tag + typed
	}
	id, err = resolveID(k.what, typed, ids)
	return id, true, err
}

// missionArg reads a mission id argument: a whole id, or a unique prefix
// of a live mission's (msn_89d7, or 89d7).
func (inv *invocation) missionArg(c *cli.Context) (string, error) {
	typed, err := oneArg(c, "mission id")
	if err != nil {
		return "", err
	}
	id, ok, err := inv.resolve(missionKind, typed)
	if !ok {
		return "", usagef("%q is not a mission id (msn_ followed by 12 lowercase hex digits, or a unique start of one)", typed)
	}
	return id, err
}

// docArg reads a shared document's id: whole, or a unique prefix of a
// published one's (atl_5c2e, or 5c2e); anything else is passed on whole,
// for the verb to refuse with its lesson.
func (inv *invocation) docArg(c *cli.Context) (string, error) {
	typed, err := oneArg(c, "document id")
	if err != nil {
		return "", err
	}
	id, _, err := inv.resolve(docKind, typed)
	return id, err
}

// hexPrefix is what may start a 12-hex id (a letter's, a memory's, a
// follow-up's): at least four hex digits, fewer than twelve.
var hexPrefix = regexp.MustCompile(`^[0-9a-f]{4,11}$`)

// prefixArg reads an id argument: whole, or a unique start of one of the
// ids list returns (at least four hex digits); anything else is passed on
// whole, for the verb to refuse with its lesson.
func prefixArg(c *cli.Context, what string, list func(context.Context) ([]string, error)) (string, error) {
	typed, err := oneArg(c, what+" id")
	if err != nil || !hexPrefix.MatchString(typed) {
		return typed, err
	}
	ids, err := list(c.Context)
	if err != nil {
		return "", err
	}
	return resolveID(what, typed, ids)
}

// letterIDs lists every mail letter's id.
func (inv *invocation) letterIDs(ctx context.Context) ([]string, error) {
	flows, err := inv.flows()
	if err != nil {
		return nil, err
	}
	all, err := flows.Box.All(ctx)
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(all))
	for i, s := range all {
		ids[i] = s.ID
	}
	return ids, nil
}

// memoryIDs lists every memory's id, or every follow-up's.
func (inv *invocation) memoryIDs(followups bool) func(context.Context) ([]string, error) {
	return func(ctx context.Context) ([]string, error) {
		book, err := inv.book()
		if err != nil {
			return nil, err
		}
		v, err := book.View(ctx)
		if err != nil {
			return nil, err
		}
		var ids []string
		if followups {
			for _, f := range v.Followups {
				ids = append(ids, f.ID)
			}
			return ids, nil
		}
		for _, m := range v.Memories {
			ids = append(ids, m.ID)
		}
		return ids, nil
	}
}
