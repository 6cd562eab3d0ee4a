package testscripts

// The team's round trip through real git servers (issue 27): two clones,
// missions, mail both ways and a landing carried by m1nd sync; the six
// forgeries an agent would push refused by the server's m1nd hook with
// the lesson shown to the pusher; a forged push to a hookless repository
// held back by both clones, listed by status and repaired; and, behind
// nginx, a push whose hooks outlive the proxy's timeout named as cut
// short. Each against a plain bare repository, git-http-backend behind
// nginx with basic auth, and gitolite3 over a loopback sshd.

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/m1nd/m1nd/brain"
	"github.com/m1nd/m1nd/chain"
	"github.com/m1nd/m1nd/gitstore"
	"github.com/m1nd/m1nd/ops"
	"github.com/m1nd/m1nd/rules"
	"github.com/m1nd/m1nd/rules/rulestest"
	"github.com/m1nd/m1nd/testkit/gittest"
	"github.com/m1nd/m1nd/testkit/longtest"
)

func TestForgeRoundTrip(t *testing.T) {
	longtest.Need(t, "the real git forges")
	for _, server := range []struct {
		name  string
		start func(t *testing.T) *forge
	}{
		{"bare", fileForge},
		{"http", func(t *testing.T) *forge { return httpForge(t, 30*time.Second).forge }},
		{"gitolite", gitoliteForge},
		{"gitea", func(t *testing.T) *forge { return giteaForge(t, false) }},
		{"gitea-ssh", func(t *testing.T) *forge { return giteaForge(t, true) }},
	} {
		t.Run(server.name, func(t *testing.T) { forgeRoundTrip(t, server.start(t)) })
	}
}

// rawCommit writes p's commit with message as raw git would, past every
// law, and returns it.
func rawCommit(t *testing.T, repo *gitstore.Repo, p *chain.Prepared, message string) string {
	t.Helper()
	sig, err := chain.Signature(p.Meta.Agent, p.Meta.When)
	if err != nil {
		t.Fatal(err)
	}
	c := &gitstore.Commit{Tree: p.Tree, Author: sig, Committer: sig, Message: message}
	if !p.Parent.IsZero() {
		c.Parents = []gitstore.Hash{p.Parent}
	}
	h, err := repo.WriteCommit(c)
	if err != nil {
		t.Fatal(err)
	}
	return h.String()
}

func forgeRoundTrip(t *testing.T, f *forge) {
	ctx := context.Background()
	f.create(t, "shop", true)
	f.create(t, "open", false)
	r := &bindRig{remoteBrain: newRemoteBrainAt(t, f.url("shop"), f.config)}
	r.flows = ops.New(r.repo, "shop")
	r.g.Git("push", "-q", "origin", "main")
	as := func(dir, agent string, args ...string) string {
		t.Helper()
		cmd := exec.Command(m1ndBin(t), args...)
		cmd.Dir, cmd.Env = dir, append(gittest.Env(t), "M1ND_AGENT="+agent)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s: m1nd %s: %v\n%s", agent, strings.Join(args, " "), err, out)
		}
		return string(out)
	}

	// --- A landing, carried to a second clone. ---------------------------
	landed, _, _ := r.mergeWait(r.candidate("gate://landed"), "a.txt")
	if _, err := r.flows.Land(ctx, ops.LandRequest{MissionID: landed, Agent: "owner", Origin: rules.OriginHumanTTY, Now: r.now}); err != nil {
		t.Fatalf("landing: %v", err)
	}
	rep, raw := r.syncIn(r.g.Dir)
	if !rep.OK || !strings.Contains(strings.Join(rep.Pushed, " "), chain.MissionRefPrefix+landed) {
		t.Fatalf("the first sync did not push the landing:\n%s", raw)
	}
	b := r.secondClone()
	rep, raw = r.syncIn(b.Dir)
	if !rep.OK || !strings.Contains(strings.Join(rep.Created, " "), chain.MissionRefPrefix+landed) {
		t.Fatalf("the second clone did not take the landing:\n%s", raw)
	}
	if out := as(b.Dir, "bob", "mission", "show", landed); !strings.Contains(out, "landed") {
		t.Fatalf("the second clone does not show the landing:\n%s", out)
	}
	if out := as(b.Dir, "bob", "verify"); !strings.Contains(out, " 0 faults") {
		t.Fatalf("verify in the second clone:\n%s", out)
	}

	// --- Mail both ways. ------------------------------------------------
	as(r.g.Dir, "alice", "mail", "send", "--to", "bob", "--what", "the landing is in; please review a.txt")
	r.syncIn(r.g.Dir)
	r.syncIn(b.Dir)
	if out := as(b.Dir, "bob", "mail", "inbox"); !strings.Contains(out, "please review a.txt") {
		t.Fatalf("bob's inbox lacks alice's letter:\n%s", out)
	}
	as(b.Dir, "bob", "mail", "send", "--to", "alice", "--what", "reviewed: a.txt reads well")
	r.syncIn(b.Dir)
	r.syncIn(r.g.Dir)
	if out := as(r.g.Dir, "alice", "mail", "inbox"); !strings.Contains(out, "reviewed: a.txt reads well") {
		t.Fatalf("alice's inbox lacks bob's answer:\n%s", out)
	}

	// --- Six forgeries, each pushed with plain git and refused by the
	// server's hook, the lesson shown to the pusher. ----------------------
	archivable := func(name string) (string, *chain.Prepared) {
		id, _, _ := r.mergeWait(r.candidate("gate://"+name), name+".txt")
		p, err := r.flows.PrepareArchive(id, "owner", r.now)
		if err != nil {
			t.Fatal(err)
		}
		return chain.MissionRefPrefix + id, p
	}
	forgedLanding, mwL, mwLID := r.mergeWait(r.candidate("gate://forged"), "f.txt")
	unprovenRef, unproven := archivable("unproven")
	terminalRef, terminal := archivable("terminal")
	signedRef, signed := archivable("signed")
	_, other := archivable("other")
	key, spare := teamKey(), rulestest.New(t, "ed25519")
	if _, err := brain.RegisterFirstKey(ctx, r.repo, brain.Passkey{CredentialID: key.ID, PublicKey: key.Key.PKIX, Label: "human", AddedAt: chain.Timestamp(r.now)}, r.now); err != nil {
		t.Fatal(err)
	}
	// The admin trusts the key set alice registered, by its fingerprint.
	fp := keySetFingerprint(t, r.repo)
	f.trust(t, "shop", fp)
	if rep, raw := r.syncIn(r.g.Dir); !rep.OK {
		t.Fatalf("sync before the forgeries:\n%s", raw)
	}
	// bob takes the brain's keys once he checked their fingerprint with
	// alice: never in silence.
	as(b.Dir, "bob", "sync", "--trust", fp)
	addKey, err := brain.PrepareAddKey(r.repo, brain.Passkey{CredentialID: spare.ID, PublicKey: spare.Key.PKIX, Label: "agent's", AddedAt: chain.Timestamp(r.now)}, r.now)
	if err != nil {
		t.Fatal(err)
	}
	landingRef := chain.MissionRefPrefix + forgedLanding
	forgeries := []struct {
		what, ref, commit, code string
	}{
		{"a landed letter no import backs", landingRef, r.landedLetter(forgedLanding, mwL, mwLID, 1), "landed_law"},
		{"an archive with no proof", unprovenRef, rawCommit(t, r.repo, unproven, unproven.Message(rules.OriginHumanPasskey, nil)), "human_gesture_required"},
		{"a receipt no human imported", brain.StoreRef, r.unprovenReceipt(), "human_gesture_required"},
		{"a terminal archive after the first key", terminalRef, rawCommit(t, r.repo, terminal, terminal.Message(rules.OriginHumanTTY, nil)), "human_gesture_required"},
		{"a proof of another change", signedRef, rawCommit(t, r.repo, signed, signed.Message(rules.OriginHumanPasskey, key.Assert(other.Challenge(), nil))), "human_gesture_required"},
		{"a key added with no proof", brain.KeysRef, rawCommit(t, r.repo, addKey.Prepared, addKey.Prepared.Message(rules.OriginHumanPasskey, nil)), "human_gesture_required"},
	}
	for _, forgery := range forgeries {
		before := r.g.Git("ls-remote", "origin", forgery.ref)
		out, err := r.g.TryGit("push", "origin", forgery.commit+":"+forgery.ref)
		if err == nil || !strings.Contains(out, "remote: m1nd: refused: "+forgery.code+": ") {
			t.Errorf("%s: the server took it, or the pusher did not see the lesson (%v):\n%s", forgery.what, err, out)
		}
		if after := r.g.Git("ls-remote", "origin", forgery.ref); after != before {
			t.Errorf("%s: the server's ref moved: %s, was %s", forgery.what, after, before)
		}
	}

	// --- A hookless repository (github.com's case): a forged raw push is
	// held back by both clones and listed until repaired. ----------------
	r.g.Git("remote", "add", "open", f.url("open"))
	b.Git("remote", "add", "open", f.url("open"))
	if out := as(r.g.Dir, "alice", "sync", "open"); !strings.Contains(out, "to push") {
		t.Fatalf("the first sync to the hookless repository:\n%s", out)
	}
	r.g.Git("push", "-q", "open", forgeries[0].commit+":"+landingRef)
	for _, c := range []struct{ name, dir string }{{"alice", r.g.Dir}, {"bob", b.Dir}} {
		cmd := exec.Command(m1ndBin(t), "sync", "open")
		cmd.Dir, cmd.Env = c.dir, gittest.Env(t)
		out, _ := cmd.CombinedOutput()
		if !strings.Contains(string(out), landingRef) || !strings.Contains(string(out), "landed_law") {
			t.Fatalf("%s's sync did not hold the forged landing back:\n%s", c.name, out)
		}
		if st := as(c.dir, c.name, "status"); !strings.Contains(st, "held") || !strings.Contains(st, landingRef) {
			t.Fatalf("%s's status does not list the held ref:\n%s", c.name, st)
		}
	}
	if got := b.Git("for-each-ref", "--format=%(objectname)", landingRef); got == forgeries[0].commit {
		t.Fatalf("bob's clone took the forged landing")
	}
	as(r.g.Dir, "alice", "sync", "open", "--repair", landingRef)
	if got, want := strings.Fields(r.g.Git("ls-remote", "open", landingRef))[0], r.g.Git("rev-parse", landingRef); got != want {
		t.Fatalf("after the repair open holds %s, want alice's %s", got, want)
	}
	for _, c := range []struct{ name, dir string }{{"bob", b.Dir}, {"alice", r.g.Dir}} {
		as(c.dir, c.name, "sync", "open")
		if st := as(c.dir, c.name, "status"); strings.Contains(st, landingRef) {
			t.Fatalf("%s's status still lists the repaired ref:\n%s", c.name, st)
		}
	}
}

// TestForgeProxyTimeoutIsNamed: behind nginx, a push whose server hooks
// outlive fastcgi_read_timeout gets a 504; sync names it a push cut short
// by the server or a proxy, with its batch, not a refusal or a race.
func TestForgeProxyTimeoutIsNamed(t *testing.T) {
	longtest.Need(t, "the real git forges")
	site := httpForge(t, time.Second)
	site.create(t, "slow", false)
	// The server turns slow once the brain's runner pins are up.
	r := newRemoteBrainAt(t, site.url("slow"), nil)
	hook := filepath.Join(site.dir("slow"), "hooks", "update")
	if err := os.WriteFile(hook, []byte("#!/bin/sh\nsleep 3\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(m1ndBin(t), "sync")
	cmd.Dir, cmd.Env = r.g.Dir, gittest.Env(t)
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "push cut short in batch 1 of 1: the server or a proxy timed out or hung up") {
		t.Fatalf("sync through a proxy that timed out (%v):\n%s", err, out)
	}
	if strings.Contains(string(out), "the remote moved") {
		t.Fatalf("sync blames a race for a timeout:\n%s", out)
	}
}

// TestForgeProxyCutShortPushesInHalves: behind nginx with a 2 s read
// timeout, a server whose update hook costs 0.15 s a ref cuts short any
// push of more than about a dozen refs. A first sync of 30 missions is
// cut short, pushes the batch again in halves, and lands every ref: a
// proxy's timeout never blocks a first sync.
func TestForgeProxyCutShortPushesInHalves(t *testing.T) {
	longtest.Need(t, "the real git forges")
	site := httpForge(t, 2*time.Second)
	site.create(t, "paced", false)
	r := newRemoteBrainAt(t, site.url("paced"), nil)
	for i := range 30 {
		if out, err := r.m1nd(r.g.Dir, "mission", "new", "--block", "sb_shop_core", "--synthetic"); err != nil {
			t.Fatalf("mission %d: %v\n%s", i, err, out)
		}
	}
	hook := filepath.Join(site.dir("paced"), "hooks", "update")
	if err := os.WriteFile(hook, []byte("#!/bin/sh\nsleep 0.15\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(m1ndBin(t), "sync")
	cmd.Dir, cmd.Env = r.g.Dir, gittest.Env(t)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "was cut short (origin timed out or hung up); pushing it again in batches of") {
		t.Fatalf("a first sync through a proxy that cuts large pushes (%v):\n%s", err, out)
	}
	remote := gittest.Open(t, site.dir("paced")).Git("for-each-ref", "--format=%(refname)", "refs/m1nd/missions/")
	if n := len(strings.Fields(remote)); n != 30 {
		t.Fatalf("the server holds %d of 30 missions:\n%s", n, out)
	}
	t.Logf("sync's progress:\n%s", out)
}
