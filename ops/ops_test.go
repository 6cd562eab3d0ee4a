package ops_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/m1nd/m1nd/brain"
	"github.com/m1nd/m1nd/chain"
	"github.com/m1nd/m1nd/githook"
	"github.com/m1nd/m1nd/gitstore"
	"github.com/m1nd/m1nd/internal/secret"
	"github.com/m1nd/m1nd/ops"
	"github.com/m1nd/m1nd/rules"
	"github.com/m1nd/m1nd/testkit/gittest"
)

// OpenMission opens the mission, links the follow-up and delivers the
// packet, all as one agent at one time.
func TestOpenMissionLinksAndDelivers(t *testing.T) {
	s := newSurfaces(t)
	ctx := context.Background()
	now := time.Now()
	fu, err := bookOf(s.flows).OpenFollowup(ctx, "alice", "owner", "find out why the gate is red", "", now)
	if err != nil {
		t.Fatal(err)
	}
	packet := []byte("# Mission packet\n\nMake the gate green.\n")
	opened, err := s.flows.OpenMission(ctx, ops.MissionRequest{BlockID: "sb_shop_core", Agent: "owner", Packet: packet, DeliverTo: "bob", Followup: fu, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	head, err := s.flows.Current(opened.Mission.MissionID)
	if err != nil {
		t.Fatal(err)
	}
	if l := head.Letter; l.Phase != chain.PhaseJudging || l.PacketRef == nil || *l.PacketRef != chain.PacketRef(packet) || l.Seat != "hand" || l.Capability != "hand-runner" {
		t.Fatalf("the judging letter: %+v", l)
	}
	if d := opened.Delivered; d == nil || d.To != "bob" || !strings.HasPrefix(d.Ref, "refs/m1nd/mail/bob/") {
		t.Fatalf("delivered: %+v", d)
	}
	inbox, err := boxOf(s.flows).Inbox(context.Background(), "bob")
	if err != nil || len(inbox) != 1 {
		t.Fatalf("bob's inbox: %v %v", inbox, err)
	}
	// The link is recorded: the follow-up now names the mission.
	if err := bookOf(s.flows).CheckLink(context.Background(), "owner", fu); err != nil {
		t.Fatal(err)
	}
	if mem := s.g.Git("log", "-p", "refs/m1nd/memory/owner"); !strings.Contains(mem, opened.Mission.MissionID) {
		t.Fatalf("no link to %s in owner's memory:\n%s", opened.Mission.MissionID, mem)
	}
}

// Without a delivery or a follow-up, OpenMission is the judging letter
// alone: no packet is no packet_ref.
func TestOpenMissionAlone(t *testing.T) {
	s := newSurfaces(t)
	opened, err := s.flows.OpenMission(context.Background(), ops.MissionRequest{BlockID: "sb_shop_core", Agent: "owner", Now: time.Now()})
	if err != nil || opened.Delivered != nil {
		t.Fatalf("%+v %v", opened, err)
	}
	head, err := s.flows.Current(opened.Mission.MissionID)
	if err != nil || head.Letter.PacketRef != nil {
		t.Fatalf("%+v %v", head, err)
	}
	if mail := s.g.Git("for-each-ref", "refs/m1nd/mail/", "refs/m1nd/memory/"); mail != "" {
		t.Fatalf("wrote %s", mail)
	}
}

// Init makes the runtime dir, the secret and the hook once; again, it
// changes nothing. A secret it will not replace is a SecretError.
func TestInit(t *testing.T) {
	g := gittest.Init(t, "shop")
	repo, err := gitstore.Open(g.Dir)
	if err != nil {
		t.Fatal(err)
	}
	defer repo.Close()
	flows := ops.New(repo, "shop")
	ctx := context.Background()
	res, err := flows.Init(ctx, guardFolder)
	if err != nil {
		t.Fatal(err)
	}
	hook := filepath.Join(githook.GuardDir(repo), "reference-transaction")
	want := []string{repo.RuntimeDir(), secret.SecretFile, secret.RunnerKeyFile, hook, brain.RegistrationRef} // no remote: the brain registers its own name
	if res.Brain != "shop" || res.RuntimeDir != repo.RuntimeDir() || strings.Join(res.Created, "\n") != strings.Join(want, "\n") || res.Registered != "registered" {
		t.Fatalf("first init: %+v, want created %v", res, want)
	}
	if _, err := secret.LoadSecret(secret.SecretPath(repo)); err != nil {
		t.Fatal(err)
	}
	if res, err := flows.Init(ctx, guardFolder); err != nil || len(res.Created) != 0 {
		t.Fatalf("second init: %+v %v", res, err)
	}
	os.Chmod(secret.SecretPath(repo), 0o644)
	var bad *ops.SecretError
	if _, err := flows.Init(ctx, guardFolder); !errors.As(err, &bad) || !strings.Contains(err.Error(), "0600") {
		t.Fatalf("a readable secret: %v", err)
	}
}

// Status counts heads per phase and blocks per colour; the landing bell
// is absent until a head waits in merge_wait (DESIGN §4).
func TestStatusLandingBell(t *testing.T) {
	s := newSurfaces(t)
	ctx := context.Background()
	now := time.Now()
	st, err := s.flows.Status(ctx, now)
	if err != nil {
		t.Fatal(err)
	}
	if data, _ := json.Marshal(st); strings.Contains(string(data), "landing_bell") || st.BlockCount() != 3 || st.Blocks["needs-evidence"] != 3 || !st.HasStore() {
		t.Fatalf("before: %s", data)
	}
	opened, err := s.flows.OpenMission(ctx, ops.MissionRequest{BlockID: "sb_shop_core", Agent: "runnerd:b1", Now: now.Add(-time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	head, _ := s.flows.Current(opened.Mission.MissionID)
	mw := chain.Next(head.Letter, head.HeadLetterID, now)
	mw.SetPhase(chain.PhaseMergeWait)
	exit := int64(0)
	mw.Gate = &chain.Gate{Command: "go test ./core/...", ExitStatus: &exit, ArtifactHash: "sha256:" + strings.Repeat("ab", 32)}
	// An agent's own merge_wait, naming no runner (no candidate: nothing
	// a runner could sign): a claim, counted by the bell all the same.
	mw.RunnerID = nil
	if _, err := s.flows.Post(ctx, chain.PostRequest{Body: mw.Canonical(), Agent: "agent-b1"}); err != nil {
		t.Fatal(err)
	}
	st, err = s.flows.Status(ctx, now)
	if err != nil {
		t.Fatal(err)
	}
	if st.Missions != 1 || st.Phases[chain.PhaseMergeWait] != 1 || st.LandingBell == nil || st.LandingBell.MergeWait != 1 {
		t.Fatalf("after: %+v", st)
	}
}

// A brain with no store has an empty block view and a status without a
// skeleton (the CLI's blocks verb refuses no_store on it, as before).
func TestViewsWithoutAStore(t *testing.T) {
	g := gittest.Init(t, "shop")
	repo, err := gitstore.Open(g.Dir)
	if err != nil {
		t.Fatal(err)
	}
	defer repo.Close()
	flows := ops.New(repo, "shop")
	v, err := flows.Blocks(context.Background(), time.Now())
	if err != nil || v.HasStore() || v.Blocks == nil || len(v.Blocks) != 0 {
		t.Fatalf("%+v %v", v, err)
	}
	data, _ := rules.EncodeReply(rules.Success(v))
	if string(data) != `{"ok":true,"served_brain":"shop","store_version":0,"skeleton":null,"blocks":[]}` {
		t.Fatalf("no store: %s", data)
	}
	st, err := flows.Status(context.Background(), time.Now())
	if err != nil || st.HasStore() || st.BlockCount() != 0 {
		t.Fatalf("%+v %v", st, err)
	}
}

// guardFolder is what m1nd init hands ops.Init: m1nd's hooks folder
// written, the shared folder left alone.
func guardFolder(repo *gitstore.Repo) ([]string, []string, error) {
	written, err := githook.SyncGuardDir(repo, "m1nd")
	return written, nil, err
}

// A clone with a remote whose brain's name is neither registered nor
// fixed by a mission refuses its first mission (brain_mismatch, nothing
// written); a registered brain, and one with no remote, open it.
func TestOpenMissionNeedsTheBrainsName(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name       string
		remote     bool
		registered bool
		refused    bool
	}{
		{"a remote, no registration", true, false, true},
		{"a remote, registered", true, true, false},
		{"no remote, no registration", false, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSurfaces(t)
			if tc.remote {
				s.g.Git("remote", "add", "origin", filepath.Join(t.TempDir(), "nowhere.git"))
			}
			if tc.registered {
				if _, _, err := brain.Register(ctx, repoOf(s.flows), "shop"); err != nil {
					t.Fatal(err)
				}
			}
			before := s.g.Git("for-each-ref", "refs/m1nd/missions/")
			_, err := s.flows.OpenMission(ctx, ops.MissionRequest{BlockID: "sb_shop_core", Agent: "owner", Now: time.Now()})
			refusal, refused := rules.AsRefusal(err)
			if refused != tc.refused || (refused && refusal.Code != rules.BrainMismatch) || (!tc.refused && err != nil) {
				t.Fatalf("OpenMission: %v, want refused %v", err, tc.refused)
			}
			if refused && !strings.Contains(refusal.Lesson, "run m1nd sync") {
				t.Errorf("the lesson does not say to sync: %s", refusal.Lesson)
			}
			if after := s.g.Git("for-each-ref", "refs/m1nd/missions/"); refused && after != before {
				t.Fatalf("a refused mission wrote %s", after)
			}
		})
	}
}
