package cli

import (
	"context"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/m1nd/m1nd/chain"
	"github.com/m1nd/m1nd/gitstore"
	"github.com/m1nd/m1nd/memory"
	"github.com/m1nd/m1nd/rules"
)

// resolveID is the one of ids that typed names (rules.Abbreviated), as
// git takes an abbreviated commit; a start of several, or of none, is a
// usage error that says so.
func resolveID(what, typed string, ids []string) (string, error) {
	switch matches := rules.Abbreviated(typed, ids); len(matches) {
	case 0:
		return "", Usagef("no %s starts with %q", what, typed)
	case 1:
		return matches[0], nil
	default:
		return "", Usagef("%s", rules.AmbiguousLesson(what, typed, matches))
	}
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
}

var (
	missionKind = refKind{"mission", "msn_", chain.MissionRefPrefix, chain.ValidMissionID}
	docKind     = refKind{"document", "atl_", memory.AtlasPrefix, memory.ValidDocID}
)

// mayStart reports whether typed may start an id of k: the tag and 1 to
// 12 hex digits, or 4 to 12 hex digits without it.
func (k refKind) mayStart(typed string) bool {
	digits, tagged := strings.CutPrefix(typed, k.tag)
	least := 4
	if tagged {
		least = 1
	}
	if len(digits) < least || len(digits) > 12 {
		return false
	}
	return strings.Trim(digits, "0123456789abcdef") == ""
}

// resolve is the one id of kind that typed starts (with its tag or
// without), typed itself when it is whole; ok is false when typed cannot
// start one.
func (inv *Invocation) resolve(k refKind, typed string) (id string, ok bool, err error) {
	if k.valid(typed) {
		return typed, true, nil
	}
	if !k.mayStart(typed) {
		return typed, false, nil
	}
	repo, err := inv.OpenRepo()
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
func (inv *Invocation) missionArg(c *cli.Context) (string, error) {
	typed, err := OneArg(c, "mission id")
	if err != nil {
		return "", err
	}
	id, ok, err := inv.resolve(missionKind, typed)
	if !ok {
		return "", Usagef("%q is not a mission id (msn_ followed by 12 lowercase hex digits, or a unique start of one)", typed)
	}
	return id, err
}

// docArg reads a shared document's id: whole, or a unique prefix of a
// published one's (atl_5c2e, or 5c2e); anything else is passed on whole,
// for the verb to refuse with its lesson.
func (inv *Invocation) docArg(c *cli.Context) (string, error) {
	typed, err := OneArg(c, "document id")
	if err != nil {
		return "", err
	}
	id, _, err := inv.resolve(docKind, typed)
	return id, err
}

// letterIDs lists every mail letter's id, for completion (mail show
// takes a start of one itself: ops.ShowLetter).
func (inv *Invocation) letterIDs(ctx context.Context) ([]string, error) {
	flows, err := inv.Flows()
	if err != nil {
		return nil, err
	}
	all, _, err := flows.Mail(ctx)
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(all))
	for i, s := range all {
		ids[i] = s.ID
	}
	return ids, nil
}

// memoryIDs lists every memory's id, or every follow-up's, for
// completion (the Book takes a start of one itself).
func (inv *Invocation) memoryIDs(followups bool) func(context.Context) ([]string, error) {
	return func(ctx context.Context) ([]string, error) {
		flows, err := inv.Flows()
		if err != nil {
			return nil, err
		}
		v, err := flows.Memories(ctx)
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
