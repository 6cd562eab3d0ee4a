package testscripts

import (
	"context"
	"crypto/ed25519"
	"strings"
	"testing"

	"github.com/m1nd/m1nd/brain"
	"github.com/m1nd/m1nd/brain/pinstest"
	"github.com/m1nd/m1nd/chain"
	"github.com/m1nd/m1nd/ops"
	"github.com/m1nd/m1nd/rules"
	"github.com/m1nd/m1nd/testkit/gittest"
)

// TestForgedGateProofsAreRefusedEverywhere: a runner's merge_wait stands
// on its signature by the key the pins approve for it (issue 36). Written
// with git's own plumbing, a merge_wait naming runner b1 with a forged
// signature, with a signature by a key no pin set approved, with b1's
// real signature of another tree, with no signature at all (posted as
// runnerd:b1 by anyone), and — after the human rotated b1's key — one
// signed by the retired key, is refused unproven_gate by the local
// reference-transaction hook, by m1nd verify (written past the hook), by
// a bare remote's pre-receive, and by a second clone's sync that finds it
// on the remote (put there past its hook) or holds it and would push it.
// The merge_wait b1 signed before the rotation still stands everywhere.
// And a remote installed
// with --protect main takes main to a tree a runner's signed gate passed
// on, never to one whose landing rests on an agent's claim.
func TestForgedGateProofsAreRefusedEverywhere(t *testing.T) {
	ctx := context.Background()
	r := newBindRig(t)
	r.g.Git("push", "-q", "origin", "main", brain.StoreRef+":"+brain.StoreRef)
	if out, err := r.m1nd(r.remote, "hooks", "install", "--bare", "--protect", "main"); err != nil {
		t.Fatalf("hooks install --bare --protect main: %v\n%s", err, out)
	}
	bare := gittest.Open(t, r.remote)

	// An honest merge_wait, signed by b1 before its key is rotated.
	honest, _, _ := r.mergeWait(r.candidate("gate://honest"), "honest.txt")
	honestRef := chain.MissionRefPrefix + honest
	r.g.Git("push", "-q", "origin", honestRef+":"+honestRef)

	_, attacker, _ := ed25519.GenerateKey(nil)
	stranger := &pinstest.Runner{ID: "b1", Gate: r.runner.Gate, Pin: r.runner.Pin, Key: attacker, Version: r.runner.Version}
	forgeries := map[string]string{}   // ref → what the refusal must say
	forgedAt := map[string][2]string{} // ref → the honest head, the forgery
	forge := func(label, file, want string, sign func(mw *chain.Letter) (*rules.Attestation, string)) {
		t.Helper()
		id, mw := r.work(r.candidate("gate://"+file), file)
		ref := chain.MissionRefPrefix + id
		att, agent := sign(mw)
		body := mw.Canonical()
		msg := chain.MissionKind.Message(chain.Commit{Agent: agent, Doc: chain.NamedLetter{Letter: mw, ID: chain.LetterID(body)}, Attestation: att})
		head := r.g.Git("rev-parse", ref)
		forged := r.g.CommitFile(head, chain.LetterFile, body, msg)

		out, err := r.g.TryGit("update-ref", ref, forged, head)
		if err == nil || !strings.Contains(out, "unproven_gate") || !strings.Contains(out, want) {
			t.Errorf("%s: the local hook let it through, or said otherwise (want %q): %v\n%s", label, want, err, out)
		}
		r.g.Git("-c", "core.hooksPath=/dev/null", "update-ref", ref, forged, head)
		out, err = r.m1nd(r.g.Dir, "verify")
		if exitCode(err) != 3 || !strings.Contains(out, ref+" at "+forged[:12]+": unproven_gate") {
			t.Errorf("%s: verify (exit %d) did not name %s:\n%s", label, exitCode(err), ref, out)
		}
		if out, err := r.g.TryGit("push", "origin", ref+":"+ref); err == nil || !strings.Contains(out, "unproven_gate") {
			t.Errorf("%s: the remote took it: %v\n%s", label, err, out)
		}
		// Put on the remote past its hook, for the second clone to find.
		bare.Git("-c", "core.hooksPath=/dev/null", "fetch", "-q", r.g.Dir, ref+":"+ref)
		r.g.Git("-c", "core.hooksPath=/dev/null", "update-ref", ref, head, forged)
		forgeries[ref] = label
		forgedAt[ref] = [2]string{head, forged}
	}
	forge("a forged signature", "flipped.txt", "does not verify", func(mw *chain.Letter) (*rules.Attestation, string) {
		att := r.runner.Sign(t, mw)
		att.Sig = append([]byte{att.Sig[0] ^ 1}, att.Sig[1:]...)
		return att, "runnerd:b1"
	})
	forge("an unapproved key", "stranger.txt", "is not the one runner pins v1 approved for runner b1", func(mw *chain.Letter) (*rules.Attestation, string) {
		return stranger.Sign(t, mw), "runnerd:b1"
	})
	forge("b1's signature of another tree", "other-tree.txt", "does not verify over this letter", func(mw *chain.Letter) (*rules.Attestation, string) {
		att := r.runner.Sign(t, mw)
		refs := mw.ReceiptCandidate.Evidence.EvidenceRefs
		for i, ref := range refs {
			if strings.HasPrefix(ref, rules.TestedTreeRef) {
				refs[i] = rules.TestedTreeRef + r.g.Git("rev-parse", "main^{tree}")
			}
		}
		return att, "runnerd:b1"
	})
	forge("a self-posted runnerd: merge_wait", "self-posted.txt", "carries no signature of it", func(mw *chain.Letter) (*rules.Attestation, string) {
		r.runner.Sign(t, mw) // names b1 and its pin, as runnerd's would; no signature goes with it
		return nil, "runnerd:b1"
	})

	// The human rotates b1's key; the old one is retired, keeping what it
	// signed before. A merge_wait it signs now proves nothing.
	retired := r.runner
	r.runner = pinstest.Approve(t, r.repo, "b1", retired.Gate)
	r.g.Git("push", "-q", "origin", brain.PinsRef+":"+brain.PinsRef)
	forge("a retired key", "retired.txt", "was retired in runner pins v2", func(mw *chain.Letter) (*rules.Attestation, string) {
		return retired.Sign(t, mw), "runnerd:b1"
	})
	if out, err := r.m1nd(r.g.Dir, "verify"); err != nil {
		t.Fatalf("verify after the forgeries were undone (b1's honest merge_wait signed before its key was retired must stand): %v\n%s", err, out)
	}

	// A second clone finds every forgery on the remote and takes none; the
	// honest merge_wait it takes.
	if len(forgeries) != 5 {
		t.Fatalf("%d forgeries made, want 5", len(forgeries))
	}
	clone := r.secondClone()
	rep, raw := r.syncIn(clone.Dir)
	for ref, label := range forgeries {
		if f := faultOf(rep.RefusedRemote, ref); f == nil || f.Code != string(rules.UnprovenGate) {
			t.Errorf("%s: the second clone's sync did not refuse %s:\n%s", label, ref, raw)
		}
		if _, err := clone.TryGit("rev-parse", "--verify", "-q", ref); err == nil {
			t.Errorf("%s: the second clone holds %s", label, ref)
		}
	}
	if got := clone.Git("rev-parse", honestRef); got != r.g.Git("rev-parse", honestRef) {
		t.Errorf("the second clone does not hold b1's honest merge_wait: %s", got)
	}

	// The other way: the second clone, holding a forgery written past its
	// hook, does not push it; the remote keeps the honest head.
	for ref, at := range forgedAt {
		bare.Git("-c", "core.hooksPath=/dev/null", "update-ref", ref, at[0])
		clone.Git("-c", "core.hooksPath=/dev/null", "fetch", "-q", r.g.Dir, "+"+at[1]+":"+ref)
		rep, raw := r.syncIn(clone.Dir)
		if f := faultOf(rep.RefusedLocal, ref); f == nil || f.Code != string(rules.UnprovenGate) {
			t.Errorf("%s: the second clone's sync did not refuse to push %s:\n%s", forgeries[ref], ref, raw)
		}
		if got := bare.Git("rev-parse", ref); got != at[0] {
			t.Errorf("%s: the remote's %s moved to %s", forgeries[ref], ref, got)
		}
		break // one is enough: every forgery is judged by the same law
	}

	// --protect: an agent's claim, imported at a terminal as a landing
	// into main (the weaker mode, before any passkey), and pushed with the
	// brain: the remote takes the letters and the store, never main at
	// the claimed tree.
	claim, mw := r.work(r.candidate("gate://claimed"), "claimed.txt")
	claimRef := chain.MissionRefPrefix + claim
	mw.RunnerID = nil
	posted, err := r.flows.Post(ctx, chain.PostRequest{Body: mw.Canonical(), Agent: "bob"})
	if err != nil {
		t.Fatal(err)
	}
	tip, tree := r.g.Git("rev-parse", "m1nd/"+claim), r.g.Git("rev-parse", "m1nd/"+claim+"^{tree}")
	version, _, err := brain.StoreVersion(r.repo)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.store.ImportReceipt(ctx, brain.ImportRequest{WriteRequest: brain.WriteRequest{ExpectedStoreVersion: version, Agent: "owner", Now: r.now},
		BlockID: "sb_shop_core", Receipt: chain.CanonicalJSON(mw.ReceiptCandidate), Origin: rules.OriginHumanTTY,
		Lands: &brain.Landing{MissionID: claim, LetterID: posted.LetterID, Target: "main", BranchHead: tip, TargetHead: r.g.Git("rev-parse", "main"), Tree: tree}}); err != nil {
		t.Fatalf("the terminal's import of the claim: %v", err)
	}
	r.g.Git("push", "-q", "origin", claimRef+":"+claimRef, brain.StoreRef+":"+brain.StoreRef)
	mainBefore := r.g.Git("rev-parse", "main")
	r.g.Git("update-ref", "refs/heads/main", tip, mainBefore)
	out, err := r.g.TryGit("push", "origin", "main")
	if err == nil || !strings.Contains(out, "unproven_gate") || !strings.Contains(out, "no runner whose key the pins approve proved its gate") {
		t.Fatalf("the protected remote took main to a claimed tree: %v\n%s", err, out)
	}
	if got := bare.Git("rev-parse", "main"); got != mainBefore {
		t.Fatalf("the remote's main moved to %s", got)
	}
	r.g.Git("update-ref", "refs/heads/main", mainBefore, tip)

	// A signed gate's landing moves the protected main.
	proven, _, _ := r.mergeWait(r.candidate("gate://proven"), "proven.txt")
	landed, err := r.flows.Land(ctx, ops.LandRequest{MissionID: proven, Agent: "owner", Origin: rules.OriginHumanTTY, Now: r.now})
	if err != nil {
		t.Fatalf("landing the proven mission: %v", err)
	}
	provenRef := chain.MissionRefPrefix + proven
	r.g.Git("push", "-q", "origin", provenRef+":"+provenRef, brain.StoreRef+":"+brain.StoreRef)
	if out, err := r.g.TryGit("push", "origin", "main"); err != nil {
		t.Fatalf("the protected remote refused main at the proven tree (%s): %v\n%s", landed.Commit, err, out)
	}
}
