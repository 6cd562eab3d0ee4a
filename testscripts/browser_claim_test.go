package testscripts

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/m1nd/m1nd/chain"
	"github.com/m1nd/m1nd/internal/runs"
	"github.com/m1nd/m1nd/rules"
	"github.com/m1nd/m1nd/testkit/longtest"
)

// claim makes agent bob's claim on the demo brain (issue 36): a mission
// on core, a commit writing line into core/ledger.go on its work branch,
// and bob's own merge_wait saying a gate passed on it — naming no runner:
// no gate ran. It returns the mission id.
func (o *trayOwner) claim(line string) string {
	t := o.t
	t.Helper()
	bob := &trayOwner{t: t, dir: o.dir, env: append(append([]string{}, o.env...), "M1ND_AGENT=bob")}
	var opened struct {
		MissionID string `json:"mission_id"`
	}
	if err := json.Unmarshal([]byte(bob.m1nd("mission", "new", "--block", "sb_demo_brain_core", "--json")), &opened); err != nil {
		t.Fatal(err)
	}
	id := opened.MissionID
	wt := filepath.Join(t.TempDir(), "bob-"+id)
	o.gitOut("worktree", "add", "-q", "-b", "m1nd/"+id, wt, "main")
	f, err := os.OpenFile(filepath.Join(wt, "core", "ledger.go"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintln(f, line)
	f.Close()
	o.gitOut("-C", wt, "commit", "-qam", "bob: "+line)
	commit, tree := strings.TrimSpace(o.gitOut("rev-parse", "m1nd/"+id)), strings.TrimSpace(o.gitOut("rev-parse", "m1nd/"+id+"^{tree}"))
	for _, phase := range []string{"executing", "gate"} {
		next := filepath.Join(t.TempDir(), phase+".json")
		os.WriteFile(next, []byte(bob.m1nd("mission", "next", id, "--phase", phase)), 0o644)
		bob.m1nd("mission", "post", next)
	}
	mw, err := chain.DecodeLetter([]byte(bob.m1nd("mission", "next", id, "--phase", "merge_wait")))
	if err != nil {
		t.Fatal(err)
	}
	exit, hash := int64(0), "sha256:"+strings.Repeat("ab", 32)
	gate := "! grep -q panic core/ledger.go"
	mw.RunnerID = nil
	mw.Verdict = &chain.Verdict{Decision: "APPROVE", Gist: "gate green"}
	mw.Gate = &chain.Gate{Command: gate, ExitStatus: &exit, ArtifactHash: hash}
	mw.ReceiptCandidate = &rules.Receipt{BlockID: "sb_demo_brain_core", Type: "test", Scope: rules.Scope{BlockID: "sb_demo_brain_core", BoundaryVersion: 1, ContractVersion: 1},
		Evidence: rules.Evidence{ArtifactHash: hash, EvidenceRefs: []string{"commit:" + commit, "tree:" + tree}, Command: gate, Cwd: ".", ExitStatus: &exit,
			StartedAt: time.Now().UTC().Add(-time.Minute).Format(rules.WindowLayout), EndedAt: time.Now().UTC().Format(rules.WindowLayout)}}
	post := filepath.Join(t.TempDir(), "claim.json")
	os.WriteFile(post, mw.Canonical(), 0o644)
	bob.m1nd("mission", "post", post)
	return id
}

// TestBrowserClaimedGateIsProvenBeforeItLands: agent bob commits
// `func init(){ panic("never tested") }` and posts his own merge_wait,
// naming no runner. The card and the mission view call it bob's claim,
// never "gate green"; the human's land… asks runnerd to run runner
// build-1's approved gate on exactly the claimed tree; that gate fails,
// the card turns failed saying whose claim did not hold, and main does not
// move. With no runnerd running, the same land… is refused and says so,
// nothing written.
func TestBrowserClaimedGateIsProvenBeforeItLands(t *testing.T) {
	longtest.Need(t, "the tray in a real browser")
	o := demoBrain(t, true)
	pins := fmt.Sprintf("[[runner]]\nid = \"build-1\"\ncapability = \"build-runner\"\ncommand = [\"true\", \"{packet_file}\"]\ngate_command = \"! grep -q panic core/ledger.go && echo proved\"\nworkspace_allowlist = [%q]\n", filepath.Dir(o.dir))
	if err := os.WriteFile(filepath.Join(o.dir, ".git", "m1nd", "runners.toml"), []byte(pins), 0o600); err != nil {
		t.Fatal(err)
	}
	o.url = o.serve()
	runnerd := o.runnerd("--announce-interval", "200ms", "--queue-interval", "200ms")
	ctx := browser(t)
	open(t, ctx, o.url)
	o.withPasskey(ctx)
	// The human approves build-1's pin and runnerd's key, signed.
	approvePins(t, ctx, 1)
	until(t, ctx, "runnerd to say it contains what it spawns, and to sign build-1's gate", `fetch('/api/runner_pins').then(r => r.json()).then(p => !!p.containment)`)
	waitRunnerdProves(t, o.dir, "build-1")
	mainBefore := strings.TrimSpace(o.gitOut("rev-parse", "main"))

	// bob's claim: the tray says what it is, never what bob says of it.
	bad := o.claim(`func init(){ panic("never tested") }`)
	card := fmt.Sprintf(`#cards .card[data-mission=%q]`, bad)
	until(t, ctx, "bob's claim on a card", `!!document.querySelector('`+card+` [data-proof="claimed"]')`)
	text := eval[string](t, ctx, `document.querySelector('`+card+`').textContent`)
	for _, want := range []string{"claimed by agent bob, not run by a runner you approved — not landable as it is", "bob says: APPROVE: gate green", "claimed: ! grep -q panic core/ledger.go · exit 0", "a claim — not proven"} {
		if !strings.Contains(text, want) {
			t.Errorf("the claim's card lacks %q: %s", want, text)
		}
	}
	if strings.Contains(text, "receipt not landed") || strings.Contains(text, "ready to land") {
		t.Errorf("the claim's card repeats bob's word as fact: %s", text)
	}
	if bell := eval[string](t, ctx, `document.querySelector('#bell').hidden ? '' : document.querySelector('#bell').textContent`); strings.Contains(bell, "2 ready") {
		t.Errorf("the bell counts the claim as ready: %q", bell)
	}
	click(t, ctx, card+` button.open-view`)
	until(t, ctx, "the claim's mission view", `document.querySelector('#mission').open && document.querySelector('#mission').dataset.mission === '`+bad+`' && !!document.querySelector('#mission').dataset.ready`)
	if gate := eval[string](t, ctx, `document.querySelector('#mission .mv-gate').innerText`); !strings.Contains(gate, "claimed by agent bob, not run by a runner you approved: the gate") || !strings.Contains(gate, "is bob's word, and no runner you approved ran it") {
		t.Errorf("the mission view's gate: %s", gate)
	}
	screenshot(t, ctx, "claim-view")
	click(t, ctx, `#mission-close`)

	// The human lands it: runnerd first runs build-1's approved gate on
	// exactly the claimed tree, which fails; the card turns failed.
	click(t, ctx, card+` button.land.prove`)
	until(t, ctx, "the confirm that names the proof run", `document.querySelector('#confirm').open && document.querySelector('#confirm-title').textContent.startsWith('Prove `+bad+` before landing?')`)
	click(t, ctx, `#confirm-ok`)
	until(t, ctx, "the word that runnerd runs the approved gate", `[...document.querySelectorAll('#status .msg')].some(m => m.textContent.startsWith("asked runnerd to run runner build-1's approved gate on exactly tree "))`)
	until(t, ctx, "the claim to fail", `!!document.querySelector('`+card+`[data-phase="failed"]')`)
	if text := eval[string](t, ctx, `document.querySelector('`+card+`').textContent`); !strings.Contains(text, "the claimed gate did not hold: runner build-1's approved gate on the claimed tree") {
		t.Errorf("the failed card: %s", text)
	}
	screenshot(t, ctx, "claim-failed")
	if got := strings.TrimSpace(o.gitOut("rev-parse", "main")); got != mainBefore {
		t.Fatalf("main moved to %s", got)
	}

	// No runnerd: a claim cannot be proven, and land… says so.
	runnerd.Process.Signal(os.Interrupt)
	runnerd.Wait()
	if _, live := runs.ReadRunnerd(filepath.Join(o.dir, ".git", "m1nd")); live {
		t.Fatal("runnerd's record outlived it")
	}
	another := o.claim("// a fine change")
	card = fmt.Sprintf(`#cards .card[data-mission=%q]`, another)
	until(t, ctx, "the second claim on a card", `!!document.querySelector('`+card+` button.land.prove')`)
	refsBefore := o.gitOut("for-each-ref")
	click(t, ctx, card+` button.land.prove`)
	until(t, ctx, "the confirm", `document.querySelector('#confirm').open`)
	click(t, ctx, `#confirm-ok`)
	until(t, ctx, "the refusal", `[...document.querySelectorAll('#status .msg.error')].some(m => m.textContent.includes('no runnerd runs here to prove it'))`)
	if got := o.gitOut("for-each-ref"); got != refsBefore {
		t.Fatalf("a refused landing wrote:\n%s", got)
	}
}

// waitRunnerdProves waits until the runnerd of the brain at dir records
// that it can sign runner's gate.
func waitRunnerdProves(t *testing.T, dir, runner string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		if rec, live := runs.ReadRunnerd(filepath.Join(dir, ".git", "m1nd")); live && rec.Proves(runner) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("runnerd never recorded that it signs %s's gate", runner)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
