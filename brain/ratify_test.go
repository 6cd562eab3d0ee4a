package brain

import (
	"context"
	"strings"
	"testing"

	"github.com/m1nd/m1nd/rules"
)

func ratify(s *Store, v int64, origin string, ids ...string) (*RatifyResult, error) {
	return s.Ratify(context.Background(), RatifyRequest{WriteRequest: write(v), BlockIDs: ids, Origin: origin})
}

func TestRatifyIsAHumanGestureAfterNaming(t *testing.T) {
	s, g := newStore(t)
	for _, origin := range []string{"", "runnerd", "human-touchid", "HUMAN-UI"} {
		_, err := ratify(s, 0, origin)
		wantRefusal(t, err, rules.HumanGestureRequired, "ratified_via")
	}
	_, err := ratify(s, 0, rules.OriginHumanTTY)
	wantRefusal(t, err, rules.NoStore, "")
	mustScan(t, s)
	_, err = ratify(s, 1, rules.OriginHumanTTY, "sb_shop_core", "sb_shop_nope")
	wantRefusal(t, err, rules.UnknownBlock, "block_ids")
	_, err = ratify(s, 1, rules.OriginHumanTTY)
	r := wantRefusal(t, err, rules.NeedsOwnerNaming, "block_ids")
	if !strings.Contains(r.Lesson, "sb_shop_cmd, sb_shop_core, sb_shop_github, sb_shop_root") {
		t.Fatalf("lesson %q", r.Lesson)
	}
	mustEdit(t, s, SeatOwner, `[{"op":"rename","block_id":"sb_shop_core","name":"Ledger"}]`)
	res, err := ratify(s, 2, rules.OriginHumanTTY, "sb_shop_core")
	if err != nil || strings.Join(res.Ratified, ",") != "sb_shop_core" || res.SkeletonState != StateCandidate {
		t.Fatalf("partial ratify = %+v %v", res, err)
	}
	mustEdit(t, s, SeatOwner, `[{"op":"rename","block_id":"sb_shop_cmd","name":"CLI"},{"op":"rename","block_id":"sb_shop_github","name":"CI"},{"op":"rename","block_id":"sb_shop_root","name":"Root"}]`)
	res, err = ratify(s, 4, rules.OriginHumanTTY)
	if err != nil || len(res.Ratified) != 3 || res.SkeletonState != StateRatified || res.StoreVersion != 5 {
		t.Fatalf("ratify = %+v %v", res, err)
	}
	if msg := g.Git("log", "-1", "--format=%B", StoreRef); !strings.Contains(msg, "store v5: ratify sk_shop_candidate (3 blocks)") || !strings.Contains(msg, "M1nd-Origin: human-tty") {
		t.Fatalf("commit message %q", msg)
	}
	_, err = ratify(s, 5, rules.OriginHumanTTY)
	wantRefusal(t, err, rules.SkeletonNotCandidate, "block_ids")
	// A ratified skeleton takes no candidate_edit...
	_, err = edit(t, s, SeatOwner, `[{"op":"rename","block_id":"sb_shop_core","name":"x"}]`)
	wantRefusal(t, err, rules.SkeletonNotCandidate, "")
	// ...and a scan writes only a candidate revision beside it.
	g.CommitFiles("api", map[string]string{"api/v1.go": "package api\n"})
	g.Git("rm", "-q", "-r", ".github")
	g.Git("commit", "-q", "-m", "no ci")
	before := snap(t, s)
	scan := mustScan(t, s)
	if scan.Revision != 1 || strings.Join(scan.New, ",") != "sb_shop_api" || strings.Join(scan.Gone, ",") != "sb_shop_github" {
		t.Fatalf("scan on ratified = %+v", scan)
	}
	after := snap(t, s)
	if after.Skeleton.State != StateRatified || len(after.Blocks) != len(before.Blocks) || after.Block("sb_shop_api") != nil {
		t.Fatal("a scan on a ratified skeleton changed its blocks")
	}
	if again := mustScan(t, s); again.Changed {
		t.Fatalf("the same revision was written twice: %+v", again)
	}
}
