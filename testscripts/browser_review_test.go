package testscripts

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/m1nd/m1nd/testkit/longtest"
)

// The review loop in the tray (issue 41): a mission reaches merge_wait
// under runnerd with a shell-script agent; the human comments on two lines
// of the diff and requests changes; the agent's second run finds both
// comments in its packet and commits a fix; the gate runs on the new
// commit; round 2 waits to land; the human lands it; the view shows both
// rounds and the comments.
func TestBrowserReviewLoop(t *testing.T) {
	longtest.Need(t, "the tray in a real browser")
	o := demoBrain(t, true)
	agent := filepath.Join(t.TempDir(), "agent.sh")
	script := `#!/bin/sh
test -f "$1" || exit 9
if grep -q '^# Review of' "$1"; then
  grep -e '^- ' -e '^  ' "$1" > core/REVIEWED.md
  echo '// fixed after the review' >> core/ledger.go
  git add -A core
  git commit -qm 'agent: answer the review'
  exit 0
fi
echo '// spawned' >> core/ledger.go
git commit -qam 'agent work'
`
	if err := os.WriteFile(agent, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	pin := fmt.Sprintf("[[runner]]\nid = \"build-1\"\ncapability = \"build-runner\"\ncommand = [%q, \"{packet_file}\"]\ngate_command = %q\nworkspace_allowlist = [%q]\ntimeout_secs = 60\n",
		agent, "grep -q spawned core/ledger.go && echo proved", filepath.Dir(o.dir))
	if err := os.WriteFile(filepath.Join(o.dir, ".git", "m1nd", "runners.toml"), []byte(pin), 0o600); err != nil {
		t.Fatal(err)
	}
	o.url = o.serve()
	o.runnerd("--announce-interval", "200ms")
	ctx := browser(t)
	open(t, ctx, o.url)
	o.withPasskey(ctx)
	approvePins(t, ctx, 1)

	said := o.m1nd("spawn", "--runner", "build-1", "--block", "sb_demo_brain_core", "--ask", "mark the ledger as spawned")
	id := regexp.MustCompile(`msn_[0-9a-f]{12}`).FindString(said)
	if id == "" {
		t.Fatalf("spawn said %q", said)
	}
	card := fmt.Sprintf(`#cards .card[data-mission=%q]`, id)
	until(t, ctx, "the mission at merge wait", `!!document.querySelector('`+card+`[data-phase="merge_wait"]')`)

	// Two comments on lines of the diff, a body, and a request for changes.
	click(t, ctx, card)
	until(t, ctx, "the mission view", `document.querySelector('#mission').dataset.mission === '`+id+`' && !!document.querySelector('#mission').dataset.ready`)
	diff := `#mission .file-diff[data-path="core/ledger.go"]`
	lines := eval[[]string](t, ctx, `[...document.querySelectorAll('`+diff+` button.comment-at')].map(b => b.dataset.line)`)
	if len(lines) < 2 {
		t.Fatalf("the diff offers comments on %v", lines)
	}
	first, last := lines[0], lines[len(lines)-1]
	// Each line numbered; Go coloured by the embedded highlighter.
	if !eval[bool](t, ctx, `(() => { const k = document.querySelector('`+diff+` .dl .code .hljs-keyword'); return !!k && k.textContent === 'return' && document.querySelector('`+diff+` .dl.add .ln:nth-child(2)').textContent === '`+last+`' })()`) {
		t.Error("the diff has no line numbers or no highlighting")
	}
	comment := func(line, text string) {
		t.Helper()
		click(t, ctx, diff+` button.comment-at[data-line="`+line+`"]`)
		until(t, ctx, "the comment box at line "+line, `!!document.querySelector('`+diff+` .comment-box textarea')`)
		run(t, ctx, chromedp.SendKeys(chromedp.CSS(diff+` .comment-box textarea`), text))
		click(t, ctx, diff+` .comment-box .add-comment`)
		until(t, ctx, "the comment drafted at line "+line, `!!document.querySelector('`+diff+` .comment-draft[data-line="`+line+`"]')`)
	}
	comment(first, "why is this line here?")
	comment(last, "say what spawned it")
	if n := eval[int](t, ctx, `document.querySelectorAll('#mission .review-comments li').length`); n != 2 {
		t.Fatalf("the review lists %d comments", n)
	}
	run(t, ctx, chromedp.SendKeys(chromedp.CSS(`#review-body`), "Two things, then it lands."))
	screenshot(t, ctx, "review-drafted")
	click(t, ctx, `#mission button.review-change`)
	until(t, ctx, "the review's word", `(document.querySelector('#mission .mv-said') || {}).textContent?.startsWith('review of `+id+` sent to runnerd:build-1: changes requested')`)

	// runnerd runs the agent again; its fix is gated as round 2.
	until(t, ctx, "round 2 to wait to land", `fetch('/api/missions/`+id+`').then(r => r.json()).then(o => o.head.phase === 'merge_wait' && o.head.mission_seq === 8)`)
	reviewed := o.gitOut("show", "m1nd/"+id+":core/REVIEWED.md")
	for _, want := range []string{"- core/ledger.go:" + first + " · commit ", "  why is this line here?", "- core/ledger.go:" + last + " · commit ", "  say what spawned it"} {
		if !strings.Contains(reviewed, want) {
			t.Errorf("the agent's packet lacked %q; it kept:\n%s", want, reviewed)
		}
	}
	tested := strings.TrimSpace(o.gitOut("rev-parse", "m1nd/"+id))
	if subject := strings.TrimSpace(o.gitOut("log", "-1", "--format=%s", tested)); subject != "agent: answer the review" {
		t.Fatalf("round 2 gated %q", subject)
	}

	// Land round 2.
	eval[bool](t, ctx, `(document.querySelector('#mission').close(), true)`)
	until(t, ctx, "the card's land button", `!!document.querySelector('`+card+`[data-phase="merge_wait"] button.land:not([disabled])')`)
	click(t, ctx, card+` button.land`)
	until(t, ctx, "the landing's confirm", `document.querySelector('#confirm').open`)
	click(t, ctx, `#confirm-ok`)
	until(t, ctx, "the mission landed", `!!document.querySelector('`+card+`[data-phase="landed"]')`)
	if got := strings.TrimSpace(o.gitOut("rev-parse", "main")); got != tested {
		t.Fatalf("main is at %s, want round 2's tested commit %s", got, tested)
	}

	// The view shows both rounds and the comments.
	click(t, ctx, card)
	until(t, ctx, "the landed mission's view", `document.querySelector('#mission').dataset.mission === '`+id+`' && !!document.querySelector('#mission .mv-reviews')`)
	view := eval[map[string]string](t, ctx, `(() => { const q = (s) => (document.querySelector('#mission ' + s) || {}).innerText || '';
		return {timeline: q('.mv-timeline'), reviews: q('.mv-reviews'), work: q('.mv-work')} })()`)
	for _, want := range []string{"review", "CHANGE: 2 comments: Two things, then it lands."} {
		if !strings.Contains(view["timeline"], want) {
			t.Errorf("the timeline lacks %q:\n%s", want, view["timeline"])
		}
	}
	if n := strings.Count(view["timeline"], "merge wait"); n != 2 {
		t.Errorf("the timeline shows %d merge waits, want 2 rounds:\n%s", n, view["timeline"])
	}
	for _, want := range []string{"Round 1 · changes requested", "by reviewer", "Two things, then it lands.", "core/ledger.go:" + first, "why is this line here?", "core/ledger.go:" + last, "say what spawned it", "addressed by " + tested[:12] + ", gated as round 2"} {
		if !strings.Contains(view["reviews"], want) {
			t.Errorf("the reviews lack %q:\n%s", want, view["reviews"])
		}
	}
	if !strings.Contains(view["work"], "agent: answer the review") || !strings.Contains(view["work"], "agent work") {
		t.Errorf("the landed work shows %q", view["work"])
	}
	screenshot(t, ctx, "review-landed")
	o.wantVerifyClean()
}
