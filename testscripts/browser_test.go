package testscripts

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/webauthn"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/m1nd/m1nd/brain"
	"github.com/m1nd/m1nd/brain/pinstest"
	"github.com/m1nd/m1nd/chain"
	"github.com/m1nd/m1nd/gitstore"
	"github.com/m1nd/m1nd/internal/secret"
	"github.com/m1nd/m1nd/ops"
	"github.com/m1nd/m1nd/rules"
	"github.com/m1nd/m1nd/runners"
	"github.com/m1nd/m1nd/testkit/gittest"
	"github.com/m1nd/m1nd/testkit/longtest"
	"github.com/m1nd/m1nd/tray"
)

// The tray in a real headless Chromium against the real `m1nd serve`, on a
// demo brain built by the real `m1nd demo`. Without Chromium these tests
// skip on a developer's machine and fail under CI (CI set), where .ci/run
// installs Debian's chromium.

// chromiumPath finds the browser, or says why not.
func chromiumPath(t *testing.T) string {
	t.Helper()
	for _, name := range []string{os.Getenv("M1ND_CHROMIUM"), "chromium", "chromium-browser", "google-chrome"} {
		if name == "" {
			continue
		}
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatal("no chromium on PATH: the browser tests must run under CI (.ci/run installs Debian's chromium)")
	}
	t.Skip("no chromium on PATH (apt-get install chromium); the browser tests run in CI")
	return ""
}

type trayOwner struct {
	t    *testing.T
	dir  string // the demo brain
	url  string
	env  []string
	said *bufio.Reader // the rest of what `m1nd serve` prints
}

// demoOwner builds a demo brain with the real binary and serves it.
func demoOwner(t *testing.T, readOnly bool) *trayOwner {
	t.Helper()
	o := demoBrain(t, false)
	o.url = o.serve(readOnlyFlag(readOnly)...)
	return o
}

// demoBrain builds a demo brain with the real binary, its runtime folder
// made (m1nd init) when runtime: served by the test when it is ready.
func demoBrain(t *testing.T, runtime bool) *trayOwner {
	t.Helper()
	o := &trayOwner{t: t, dir: filepath.Join(t.TempDir(), "demo-brain"), env: gittest.Env(t)}
	o.m1nd("demo", "--no-serve", "--dir", o.dir)
	if runtime {
		o.m1nd("init")
	}
	return o
}

// approvePins has the human approve the runner pins that wait in the tray
// (n of them), one gesture signed by the page's passkey.
func approvePins(t *testing.T, ctx context.Context, n int) {
	t.Helper()
	until(t, ctx, "the runner pins to wait for approval", `!document.querySelector('#pins-go').hidden`)
	click(t, ctx, `#pins-go`)
	until(t, ctx, "the approval's confirm", `document.querySelector('#confirm').open`)
	click(t, ctx, `#confirm-ok`)
	until(t, ctx, "the pins approved", fmt.Sprintf(`document.querySelector('#pins-go').hidden && document.querySelectorAll('#pins-list li[data-state="approved"]').length === %d`, n))
}

func readOnlyFlag(on bool) []string {
	if on {
		return []string{"--read-only"}
	}
	return nil
}

// serve starts the real `m1nd serve` in the brain and returns its URL.
func (o *trayOwner) serve(extra ...string) string {
	t := o.t
	t.Helper()
	args := append([]string{"serve", "--addr", "127.0.0.1:0"}, extra...)
	cmd := exec.Command(m1ndBin(t), args...)
	cmd.Dir, cmd.Env = o.dir, o.env
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	o.said = bufio.NewReader(out)
	line, err := o.said.ReadString('\n')
	if err != nil {
		t.Fatalf("m1nd serve said nothing: %v", err)
	}
	m := regexp.MustCompile(`http://localhost:\d+/`).FindString(line)
	if m == "" {
		t.Fatalf("m1nd serve printed %q", line)
	}
	return m
}

// runnerd starts the real runnerd in the demo brain, on loopback, killed
// when the test ends; extra are its flags after --addr.
func (o *trayOwner) runnerd(extra ...string) *exec.Cmd {
	t := o.t
	t.Helper()
	rd := exec.Command(m1ndBin(t), append([]string{"runnerd", "--addr", "127.0.0.1:0"}, extra...)...)
	rd.Dir, rd.Env = o.dir, o.env
	if err := rd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rd.Process.Kill(); rd.Wait() })
	return rd
}

// m1nd runs the real binary in the demo brain.
// postSigned posts merge_wait letter l as the demo's runner build-1 does:
// signed with the demo brain's runnerd key, under the pins that approve it.
func (o *trayOwner) postSigned(l *chain.Letter) {
	t := o.t
	t.Helper()
	repo, err := gitstore.Open(o.dir)
	if err != nil {
		t.Fatal(err)
	}
	defer repo.Close()
	key, err := secret.LoadRunnerKey(repo)
	if err != nil {
		t.Fatal(err)
	}
	approved, err := brain.ApprovedPins(repo)
	if err != nil || approved == nil {
		t.Fatalf("the demo's pins: %v", err)
	}
	signer := &pinstest.Runner{ID: "build-1", Gate: approved.Runner("build-1").GateCommand, Pin: approved.Runner("build-1").Pin, Key: key, Version: approved.Version}
	att := signer.Sign(t, l)
	b := ops.New(repo, "demo-brain")
	if _, err := b.Post(context.Background(), chain.PostRequest{Body: l.Canonical(), Agent: "runnerd:build-1", Attestation: att}); err != nil {
		t.Fatalf("post %s signed: %v", l.MissionID, err)
	}
}

func (o *trayOwner) m1nd(args ...string) string {
	o.t.Helper()
	cmd := exec.Command(m1ndBin(o.t), args...)
	cmd.Dir, cmd.Env = filepath.Dir(o.dir), o.env
	if _, err := os.Stat(o.dir); err == nil {
		cmd.Dir = o.dir
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		o.t.Fatalf("m1nd %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// browser opens a headless Chromium at 1280×800.
func browser(t *testing.T) context.Context {
	t.Helper()
	path := chromiumPath(t)
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.Flag("disable-quic", true),
		chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1280, 800),
	)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	t.Cleanup(cancel)
	alloc, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	t.Cleanup(cancelAlloc)
	bctx, cancelBrowser := chromedp.NewContext(alloc)
	t.Cleanup(cancelBrowser)
	return bctx
}

func run(t *testing.T, ctx context.Context, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(ctx, steps...); err != nil {
		screenshot(t, ctx, "failed")
		t.Fatal(err)
	}
}

// click clicks the element a CSS selector names.
func click(t *testing.T, ctx context.Context, sel string) {
	t.Helper()
	// Clicked from inside the page, at the moment the element is found: a
	// click by DevTools node id fails with "could not find node" when a
	// refresh replaces the element between the lookup and the click.
	until(t, ctx, "to click "+sel, fmt.Sprintf(`(() => { const e = document.querySelector(%q); if (!e) return false; e.click(); return true })()`, sel))
}

// until polls a JavaScript condition in the page.
func until(t *testing.T, ctx context.Context, what, js string) {
	t.Helper()
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](js, chromedp.WithPollingTimeout(30*time.Second))); err != nil {
		screenshot(t, ctx, "failed")
		// What the page said meanwhile (a refusal, an error) is most of
		// the diagnosis.
		said, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`[...document.querySelectorAll('#status .msg, .outcome, #confirm[open]')].map(e => e.textContent).join(' | ')`))
		t.Fatalf("waiting for %s: %v (the page says: %q)", what, err, said)
	}
}

func eval[T any](t *testing.T, ctx context.Context, js string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js))
	if err != nil {
		t.Fatalf("evaluate %s: %v", js, err)
	}
	return v
}

func screenshot(t *testing.T, ctx context.Context, name string) {
	buf, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Logf("screenshot %s: %v", name, err)
		return
	}
	path := filepath.Join(t.ArtifactDir(), name+".png")
	if err := os.WriteFile(path, buf, 0o644); err != nil {
		t.Logf("screenshot %s: %v", name, err)
	}
}

func open(t *testing.T, ctx context.Context, url string) {
	t.Helper()
	run(t, ctx, chromedp.Navigate(url))
	until(t, ctx, "the tray to start", `document.body.dataset.ready === 'true'`)
}

func cardOf(phase string) string { return fmt.Sprintf(`#cards .card[data-phase=%q]`, phase) }

func TestBrowserTrayListsHeadsAndLandsAMission(t *testing.T) {
	longtest.Need(t, "the tray in a real browser")
	o := demoOwner(t, false)
	ctx := browser(t)
	open(t, ctx, o.url)
	o.withPasskey(ctx)
	if n := eval[int](t, ctx, `document.querySelectorAll('#cards .card').length`); n != 9 {
		t.Fatalf("%d cards, want the demo's 9 heads", n)
	}
	// Failed first, pinned; the landing bell rings for the merge_wait head.
	if first := eval[string](t, ctx, `document.querySelector('#cards .card').dataset.phase`); first != "failed" {
		t.Fatalf("the first card is %s, want failed", first)
	}
	if bell := eval[string](t, ctx, `document.querySelector('#bell').hidden ? '' : document.querySelector('#bell').textContent`); !strings.Contains(bell, "1 ready to land") {
		t.Fatalf("bell %q", bell)
	}
	mw := eval[string](t, ctx, `document.querySelector('`+cardOf("merge_wait")+`').textContent`)
	for _, want := range []string{"merge wait · started ", "go test ./... · exit 0", "proven by runner build-1 (key ", "— receipt not landed", "hand · build-runner · build-1", "APPROVE: gate green"} {
		if !strings.Contains(mw, want) {
			t.Errorf("merge_wait card lacks %q: %s", want, mw)
		}
	}
	if c := eval[string](t, ctx, `document.querySelector('#block-sb_demo_brain_core').dataset.colour`); c != "needs-evidence" {
		t.Fatalf("core is %s before landing", c)
	}
	// No emoji font is assumed: the phases are drawn, not typed.
	if text := eval[string](t, ctx, `document.body.innerText`); strings.ContainsAny(text, "⏳⚖⚙") {
		t.Errorf("the page leans on an emoji font: %q", text)
	}
	// What needs the human comes first: the failed, merge_wait and
	// stagnant heads, in the lane at the top of the tray.
	if got := eval[string](t, ctx, `[...document.querySelectorAll('#needs-you .card')].map(c => c.dataset.phase).join(' ')`); got != "failed merge_wait judging" {
		t.Errorf("the needs-you lane holds %q", got)
	}
	// Times are moments, the exact one on hover.
	when := eval[map[string]string](t, ctx, `(() => { const t = document.querySelector('`+cardOf("failed")+` .phase time'); return {text: t.textContent, title: t.title} })()`)
	if !regexp.MustCompile(`^ended (\d+ h|\d+ min) ago$`).MatchString(when["text"]) || !regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$`).MatchString(when["title"]) {
		t.Errorf("the failed card's time says %q, titled %q", when["text"], when["title"])
	}
	// Each block lists its missions beside it; one opens the mission view.
	if n := eval[int](t, ctx, `document.querySelectorAll('#block-sb_demo_brain_core .block-missions .mission-link').length`); n < 1 {
		t.Fatal("core lists no missions")
	}
	screenshot(t, ctx, "before-landing")
	// Enter on a focused card opens its mission; Escape closes it.
	eval[bool](t, ctx, `(document.querySelector('`+cardOf("merge_wait")+`').focus(), true)`)
	run(t, ctx, chromedp.KeyEvent("\r"))
	until(t, ctx, "the mission view", `document.querySelector('#mission').open && !!document.querySelector('#mission').dataset.ready`)
	if text := eval[string](t, ctx, `document.querySelector('#mission-body').innerText`); !strings.Contains(text, "APPROVE: gate green") || !strings.Contains(text, "--- PASS: TestLedgerNegative") || !strings.Contains(text, "core: refuse negative entries") || !strings.Contains(text, "+func TestLedgerNegative(t *testing.T) {") {
		t.Errorf("the demo's merge_wait view says %q", text)
	}
	run(t, ctx, chromedp.KeyEvent(kb.Escape))
	until(t, ctx, "the view to close", `!document.querySelector('#mission').open`)
	id := eval[string](t, ctx, `document.querySelector('`+cardOf("merge_wait")+`').dataset.mission`)
	// A prompt the owner cancels: a short word, nothing written.
	storeHead := o.gitOut("rev-parse", "refs/m1nd/store")
	eval[bool](t, ctx, `(navigator.credentials.get = () => Promise.reject(new DOMException('The operation either timed out or was not allowed.', 'NotAllowedError')), true)`)
	click(t, ctx, cardOf("merge_wait")+` button.land`)
	until(t, ctx, "the landing's confirm", `document.querySelector('#confirm').open`)
	// The confirm names the block and what the landing does.
	if text := eval[string](t, ctx, `document.querySelector('#confirm-title').textContent + ' ' + document.querySelector('#confirm-text').textContent`); !strings.Contains(text, "Land "+id+"?") ||
		!strings.Contains(text, "Block core (sb_demo_brain_core).") || !strings.Contains(text, "imports the receipt") || !strings.Contains(text, "merges m1nd/"+id+" (1 commit, +16 −5) into main") {
		t.Errorf("the landing's confirm says %q", text)
	}
	screenshot(t, ctx, "land-confirm")
	click(t, ctx, `#confirm-ok`)
	until(t, ctx, "the cancelled word", `[...document.querySelectorAll('#status .msg')].some(m => m.textContent === 'not signed: the passkey prompt was cancelled — nothing changed' && !m.classList.contains('error'))`)
	if n := eval[int](t, ctx, `document.querySelectorAll('#status .msg.error').length`); n != 0 {
		t.Errorf("a cancelled prompt said %d errors", n)
	}
	if after := o.gitOut("rev-parse", "refs/m1nd/store"); after != storeHead || !eval[bool](t, ctx, `!!document.querySelector('`+cardOf("merge_wait")+`')`) {
		t.Fatal("a cancelled prompt changed something")
	}
	screenshot(t, ctx, "cancelled")
	eval[bool](t, ctx, `delete navigator.credentials.get`)
	// Cancelled at the confirm: nothing asked, nothing written.
	click(t, ctx, cardOf("merge_wait")+` button.land`)
	until(t, ctx, "the landing's confirm", `document.querySelector('#confirm').open`)
	click(t, ctx, `#confirm-cancel`)
	until(t, ctx, "the confirm to close", `!document.querySelector('#confirm').open`)
	if after := o.gitOut("rev-parse", "refs/m1nd/store"); after != storeHead {
		t.Fatal("a landing cancelled at its confirm wrote the store")
	}
	click(t, ctx, cardOf("merge_wait")+` button.land`)
	until(t, ctx, "the landing's confirm", `document.querySelector('#confirm').open`)
	click(t, ctx, `#confirm-ok`)
	landed := fmt.Sprintf(`#cards .card[data-mission=%q][data-phase="landed"]`, id)
	until(t, ctx, "the mission to land", `!!document.querySelector('`+landed+`')`)
	if text := eval[string](t, ctx, `document.querySelector('`+landed+` .receipt').textContent`); text != "receipt ✓ store v3" {
		t.Fatalf("landed card says %q", text)
	}
	until(t, ctx, "the landing's word", `[...document.querySelectorAll('#status .msg')].some(m => m.textContent === 'landed `+id+`: fast-forward m1nd/`+id+` into main · receipt ✓ store v3')`)
	// The agent's commit is on main, and the main worktree holds it.
	if got := strings.TrimSpace(o.gitOut("log", "-1", "--format=%s", "main")); got != "core: refuse negative entries" {
		t.Errorf("main's tip after the landing: %q", got)
	}
	if status := o.gitOut("status", "--porcelain"); status != "" {
		t.Errorf("the main worktree after the landing: %q", status)
	}
	until(t, ctx, "the card to say how the receipt was imported", `(document.querySelector('`+landed+` .proof') || {}).textContent === 'landed by passkey'`)
	until(t, ctx, "core to turn evidence-backed", `document.querySelector('#block-sb_demo_brain_core').dataset.colour === 'evidence-backed'`)
	// The provenance chain on the landed card.
	click(t, ctx, landed+` details summary`)
	prov := eval[string](t, ctx, `document.querySelector('`+landed+` details').textContent`)
	for _, want := range []string{"packet sha256:", "runner build-1", "gate sha256:", "receipt store v3"} {
		if !strings.Contains(prov, want) {
			t.Errorf("provenance lacks %q: %s", want, prov)
		}
	}
	if !eval[bool](t, ctx, `document.querySelector('#bell').hidden`) {
		t.Error("the landing bell still rings")
	}
	screenshot(t, ctx, "after-landing")
	// In git: the landed letter extends the chain, as the human's gesture
	// imported the receipt.
	log := o.m1nd("mission", "show", id, "--json")
	if !strings.Contains(log, `"phase":"landed"`) || !strings.Contains(log, `"receipt":{"imported":true,"store_version":3}`) {
		t.Fatalf("mission show: %s", log)
	}
	// The import is proved by the passkey, and the proof is recorded with
	// the store commit it proves.
	o.wantPasskeyProof("refs/m1nd/store")
	o.wantVerifyClean()
	o.wantRemoteTakesIt()
}

// wantRemoteTakesIt pushes every m1nd ref, in one atomic push, to a new
// bare remote guarded by m1nd's pre-receive: the remote judges the proofs
// with the same laws and takes the history.
func (o *trayOwner) wantRemoteTakesIt() {
	o.t.Helper()
	remote := filepath.Join(o.t.TempDir(), "remote.git")
	o.gitOut("init", "-q", "--bare", remote)
	// Its admin trusts the brain's key set, as brain keys names it.
	var keys struct {
		Fingerprint string `json:"fingerprint"`
	}
	if err := json.Unmarshal([]byte(o.m1nd("brain", "keys", "--json")), &keys); err != nil || keys.Fingerprint == "" {
		o.t.Fatalf("brain keys: %v", err)
	}
	cmd := exec.Command(m1ndBin(o.t), "-C", remote, "hooks", "install", "--bare", "--trust-key", keys.Fingerprint)
	cmd.Env = o.env
	if out, err := cmd.CombinedOutput(); err != nil {
		o.t.Fatalf("hooks install --bare: %v\n%s", err, out)
	}
	push := exec.Command("git", "push", "--atomic", remote, "refs/m1nd/*:refs/m1nd/*")
	push.Dir, push.Env = o.dir, o.env
	if out, err := push.CombinedOutput(); err != nil {
		o.t.Fatalf("the remote refused the signed history: %v\n%s", err, out)
	}
	refs := []string{"for-each-ref", "--format=%(objectname) %(refname)", "refs/m1nd/"}
	if local, theirs := o.gitOut(refs...), o.gitOut(append([]string{"--git-dir", remote}, refs...)...); local != theirs || !strings.Contains(theirs, " refs/m1nd/store\n") {
		o.t.Fatalf("the remote holds\n%s\nwant\n%s", theirs, local)
	}
}

// wantPasskeyProof says the commit at ref was made by a gesture signed by
// the passkey: the human-passkey origin and the proof, in its trailers.
func (o *trayOwner) wantPasskeyProof(ref string) {
	o.t.Helper()
	body := o.gitOut("log", "-1", "--format=%B", ref)
	if !regexp.MustCompile(`(?m)^M1nd-Origin: human-passkey$`).MatchString(body) || !regexp.MustCompile(`(?m)^M1nd-Proof: \S+`).MatchString(body) {
		o.t.Fatalf("%s: the commit carries no passkey proof:\n%s", ref, body)
	}
}

// wantVerifyClean runs `m1nd verify` and wants no fault.
func (o *trayOwner) wantVerifyClean() {
	o.t.Helper()
	if v := o.m1nd("verify"); !strings.HasSuffix(strings.TrimSpace(v), " 0 faults") {
		o.t.Fatalf("m1nd verify: %s", v)
	}
}

func TestBrowserArchiveNeedsTheConfirm(t *testing.T) {
	longtest.Need(t, "the tray in a real browser")
	o := demoOwner(t, false)
	ctx := browser(t)
	open(t, ctx, o.url)
	o.withPasskey(ctx)
	id := eval[string](t, ctx, `document.querySelector('`+cardOf("merge_wait")+`').dataset.mission`)
	click(t, ctx, cardOf("merge_wait")+` button.archive`)
	until(t, ctx, "the confirm", `document.querySelector('#confirm').open`)
	if text := eval[string](t, ctx, `document.querySelector('#confirm-text').textContent`); !strings.Contains(text, "still importable") {
		t.Fatalf("confirm says %q", text)
	}
	screenshot(t, ctx, "archive-confirm")
	click(t, ctx, `#confirm-cancel`)
	until(t, ctx, "the confirm to close", `!document.querySelector('#confirm').open`)
	time.Sleep(300 * time.Millisecond)
	if n := eval[int](t, ctx, `document.querySelectorAll('`+cardOf("archived")+`').length`); n != 1 {
		t.Fatalf("cancel archived something: %d archived cards", n)
	}
	// After a boundary bump the confirm shows both boundaries.
	if err := os.WriteFile(filepath.Join(o.dir, "core", "extra.go"), []byte("package core\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"add", "-A"}, {"commit", "-qm", "grow core"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Env = o.dir, o.env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	rec := o.m1nd("skeleton", "reconcile", "--json")
	// The page re-renders on the store's move: click once it has, or the
	// click lands on a card that is being replaced.
	version := regexp.MustCompile(`"store_version":(\d+)`).FindStringSubmatch(rec)
	if version == nil {
		t.Fatalf("reconcile said %s", rec)
	}
	until(t, ctx, "the page to show the reconciled store", `document.querySelector('#store-line').textContent.startsWith('store v`+version[1]+` ')`)
	click(t, ctx, cardOf("merge_wait")+` button.archive`)
	until(t, ctx, "the confirm", `document.querySelector('#confirm').open`)
	if text := eval[string](t, ctx, `document.querySelector('#confirm-text').textContent`); !strings.Contains(text, "proved at boundary v1 — the block is at v2") {
		t.Fatalf("confirm after the bump says %q", text)
	}
	click(t, ctx, `#confirm-ok`)
	until(t, ctx, "the archived head", `document.querySelectorAll('`+cardOf("archived")+`').length === 2 && !document.querySelector('`+cardOf("merge_wait")+`')`)
	screenshot(t, ctx, "archived")
	if show := o.m1nd("mission", "show", id, "--json"); !strings.Contains(show, `"phase":"archived"`) {
		t.Fatalf("mission show: %s", show)
	}
	o.wantPasskeyProof("refs/m1nd/missions/" + id)
	o.wantVerifyClean()
	o.wantRemoteTakesIt()
}

// Without a registered passkey the page makes no gesture: import and
// archive are disabled and say why, and a terminal still lands.
func TestBrowserGesturesNeedAPasskey(t *testing.T) {
	longtest.Need(t, "the tray in a real browser")
	o := demoOwner(t, false)
	ctx := browser(t)
	open(t, ctx, o.url)
	if !eval[bool](t, ctx, `!document.querySelector('#passkey').hidden`) {
		t.Fatal("a brain without a passkey shows no register panel")
	}
	mw := cardOf("merge_wait")
	for _, b := range []string{"land", "archive"} {
		if !eval[bool](t, ctx, fmt.Sprintf(`document.querySelector('%s button.%s').disabled`, mw, b)) {
			t.Errorf("with no passkey, %s is enabled", b)
		}
		if title := eval[string](t, ctx, fmt.Sprintf(`document.querySelector('%s button.%s').title`, mw, b)); !strings.HasPrefix(title, "register a passkey to land here") {
			t.Errorf("%s's title says %q", b, title)
		}
	}
	why := eval[string](t, ctx, `(document.querySelector('`+mw+` [data-why="gesture"]') || {}).textContent || ''`)
	if why != "register a passkey to land here — or land from a terminal: m1nd land ID" {
		t.Errorf("the merge_wait card says %q", why)
	}
	// Visible, not only in a tooltip.
	if !eval[bool](t, ctx, `(() => { const r = document.querySelector('`+mw+` [data-why="gesture"]').getBoundingClientRect(); return r.width > 0 && r.height > 0 })()`) {
		t.Error("the why is not visible")
	}
	screenshot(t, ctx, "no-passkey")
	// A click on a disabled gesture does nothing.
	eval[bool](t, ctx, `(document.querySelector('`+mw+` button.land').click(), true)`)
	time.Sleep(300 * time.Millisecond)
	if !eval[bool](t, ctx, `!!document.querySelector('`+mw+`') && !document.querySelector('#confirm').open`) {
		t.Fatal("a disabled gesture did something")
	}
	// Nor does the server sign anything: options are refused, nothing written.
	before := o.gitOut("for-each-ref", "refs/m1nd/")
	archiveOptions := `fetch('/api/gesture/options', {method: 'POST', headers: {'Content-Type': 'application/json'},
		body: JSON.stringify({gesture: 'archive', mission_id: document.querySelector('` + mw + `').dataset.mission})}).then(r => r.json())`
	reply, err := chromedp.Run(ctx, chromedp.Evaluate[map[string]any](archiveOptions, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatal(err)
	}
	if reply["refused"] != "human_gesture_required" || !strings.Contains(fmt.Sprint(reply["lesson"]), "register a passkey") {
		t.Fatalf("archive options with no passkey: %v", reply)
	}
	if after := o.gitOut("for-each-ref", "refs/m1nd/"); after != before {
		t.Fatalf("refused options moved refs:\n%s\n%s", before, after)
	}
	// Registered, the same buttons work and the why is gone.
	o.withPasskey(ctx)
	until(t, ctx, "the gestures enabled", `!document.querySelector('`+mw+` button.land').disabled && !document.querySelector('`+mw+` button.archive').disabled && !document.querySelector('`+mw+` [data-why="gesture"]')`)
	if reply, err = chromedp.Run(ctx, chromedp.Evaluate[map[string]any](archiveOptions, chromedp.EvalAwaitPromise)); err != nil || reply["ok"] != true {
		t.Fatalf("archive options with a passkey: %v %v", reply, err)
	}
	screenshot(t, ctx, "with-passkey")
}

func TestBrowserFailedPinnedUntilDismissedAndStagnantConfirm(t *testing.T) {
	longtest.Need(t, "the tray in a real browser")
	o := demoOwner(t, false)
	ctx := browser(t)
	open(t, ctx, o.url)
	click(t, ctx, cardOf("failed")+` button.dismiss`)
	until(t, ctx, "the failed card to go", `!document.querySelector('`+cardOf("failed")+`')`)
	// Dismissal is browser-local and survives a reload.
	open(t, ctx, o.url)
	if n := eval[int](t, ctx, `document.querySelectorAll('`+cardOf("failed")+`').length`); n != 0 {
		t.Fatal("a dismissed failed card came back on reload")
	}
	// A stagnant judging head hides only behind the honest confirm.
	stagnant := `#cards .card button.dismiss-stagnant`
	click(t, ctx, stagnant)
	until(t, ctx, "the confirm", `document.querySelector('#confirm').open`)
	if text := eval[string](t, ctx, `document.querySelector('#confirm-text').textContent`); text != "hides from the tray; the letter itself stays on the mailbox — a contract transition is future work." {
		t.Fatalf("stagnant confirm says %q", text)
	}
	click(t, ctx, `#confirm-ok`)
	until(t, ctx, "the stagnant card to go", `!document.querySelector('`+stagnant+`')`)
	if n := eval[int](t, ctx, `document.querySelectorAll('#cards .card').length`); n != 7 {
		t.Fatalf("%d cards after two dismissals, want 7", n)
	}
	// Collapsed, the tray shows per-phase counts.
	click(t, ctx, `#tray-toggle`)
	until(t, ctx, "the strip", `document.querySelector('#tray').classList.contains('collapsed') && getComputedStyle(document.querySelector('#tray-strip')).display !== 'none'`)
	if n := eval[string](t, ctx, `document.querySelector('#tray-strip [data-phase="judging"] .count').textContent`); n != "2" {
		t.Fatalf("strip says %s judging", n)
	}
	screenshot(t, ctx, "collapsed")
}

func TestBrowserReadOnlyOffersClipboardOnly(t *testing.T) {
	longtest.Need(t, "the tray in a real browser")
	o := demoOwner(t, true)
	ctx := browser(t)
	open(t, ctx, o.url)
	// The owner says so, in a banner one sees.
	if !eval[bool](t, ctx, `(() => { const b = document.querySelector('#read-only-banner'); const r = b.getBoundingClientRect(); return !!b.offsetParent && r.height > 0 && r.top >= 0 && r.bottom <= innerHeight && b.textContent.includes('read-only') })()`) {
		t.Error("a read-only owner shows no banner")
	}
	click(t, ctx, `#open-compose`)
	// Clipboard, the one mode, shows neither an agent nor a runner.
	if !eval[bool](t, ctx, `!document.querySelector('#compose-agent').offsetParent && !document.querySelector('#compose-runner').offsetParent`) {
		t.Error("clipboard mode shows the agent or the runner field")
	}
	for mode, disabled := range map[string]bool{"clipboard": false, "direct": true, "spawn": true} {
		if got := eval[bool](t, ctx, fmt.Sprintf(`document.querySelector('input[value=%q]').disabled`, mode)); got != disabled {
			t.Errorf("%s disabled = %v", mode, got)
		}
	}
	if why := eval[string](t, ctx, `document.querySelector('[data-why="direct"]').textContent`); !strings.Contains(why, "read-only") {
		t.Errorf("direct's disabled state says %q", why)
	}
	if n := eval[int](t, ctx, `document.querySelectorAll('button.land, button.archive').length`); n != 0 {
		t.Errorf("a read-only tray offers %d write gestures", n)
	}
	click(t, ctx, `#compose-go`)
	until(t, ctx, "the packet", `document.querySelector('#compose-packet').value.startsWith('# Mission packet — ')`)
	screenshot(t, ctx, "read-only-compose")
}

func TestBrowserCLIPostAppearsWithoutReload(t *testing.T) {
	longtest.Need(t, "the tray in a real browser")
	o := demoOwner(t, false)
	ctx := browser(t)
	open(t, ctx, o.url)
	eval[bool](t, ctx, `window.__sameDocument = true`)
	out := o.m1nd("mission", "new", "--block", "sb_demo_brain_core", "--agent", "cli-agent", "--json")
	id := regexp.MustCompile(`msn_[0-9a-f]{12}`).FindString(out)
	until(t, ctx, "the new card", fmt.Sprintf(`!!document.querySelector('#cards .card[data-mission=%q]')`, id))
	if !eval[bool](t, ctx, `window.__sameDocument === true`) {
		t.Fatal("the page reloaded")
	}
	// Clicking a card's block name shows the block in the main view.
	click(t, ctx, fmt.Sprintf(`#cards .card[data-mission=%q] .block-link`, id))
	until(t, ctx, "the block highlighted", `document.querySelector('#block-sb_demo_brain_core').classList.contains('highlight')`)
	screenshot(t, ctx, "cli-post")
}

// A brain with no missions shows the empty state, and the page works from
// the keyboard: Tab reaches the compose button, Enter opens the panel.
func TestBrowserEmptyStateAndKeyboard(t *testing.T) {
	longtest.Need(t, "the tray in a real browser")
	o := &trayOwner{t: t, dir: filepath.Join(t.TempDir(), "quiet"), env: gittest.Env(t)}
	g := exec.Command("git", "init", "-q", o.dir)
	g.Env = o.env
	if out, err := g.CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	if err := os.WriteFile(filepath.Join(o.dir, "main.go"), []byte("package main\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"add", "-A"}, {"commit", "-qm", "init"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Env = o.dir, o.env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	o.m1nd("skeleton", "scan")
	o.url = o.serve()
	ctx := browser(t)
	open(t, ctx, o.url)
	if text := eval[string](t, ctx, `document.querySelector('#tray-empty').hidden ? '' : document.querySelector('#tray-empty').textContent`); text != "no missions yet — point an agent at a block" {
		t.Fatalf("empty state %q", text)
	}
	// Tab until the compose button has the focus, then Enter.
	for i := 0; i < 10 && eval[string](t, ctx, `document.activeElement ? document.activeElement.id : ''`) != "open-compose"; i++ {
		run(t, ctx, chromedp.KeyEvent("\t"))
	}
	if id := eval[string](t, ctx, `document.activeElement.id`); id != "open-compose" {
		t.Fatalf("Tab never reached the compose button (focus on %q)", id)
	}
	run(t, ctx, chromedp.KeyEvent("\r"))
	until(t, ctx, "the compose panel", `!document.querySelector('#compose').hidden`)
	screenshot(t, ctx, "empty")
}

// Direct mode posts the judging letter and delivers the packet to an
// agent's inbox; delivery is not execution.
func TestBrowserComposeDirect(t *testing.T) {
	longtest.Need(t, "the tray in a real browser")
	o := demoOwner(t, false)
	ctx := browser(t)
	open(t, ctx, o.url)
	click(t, ctx, `#open-compose`)
	run(t, ctx, chromedp.SetValue(chromedp.CSS(`#compose-block`), "sb_demo_brain_core"),
		chromedp.SendKeys(chromedp.CSS(`#compose-ask`), "reject negative entries"))
	click(t, ctx, `input[value="direct"]`)
	if note := eval[string](t, ctx, `document.querySelector('#compose-note').textContent`); note != "direct: posted to the agent's inbox — delivery is not execution." {
		t.Fatalf("direct note %q", note)
	}
	if why := eval[string](t, ctx, `document.querySelector('[data-why="spawn"]').textContent`); !strings.Contains(why, "no live pinned build-runner") {
		t.Fatalf("spawn's disabled state says %q", why)
	}
	run(t, ctx, chromedp.SendKeys(chromedp.CSS(`#compose-agent`), "bob"))
	before := eval[int](t, ctx, `document.querySelectorAll('#cards .card').length`)
	click(t, ctx, `#compose-go`)
	until(t, ctx, "the new mission", fmt.Sprintf(`document.querySelectorAll('#cards .card').length === %d`, before+1))
	inbox := o.m1nd("mail", "inbox", "--agent", "bob", "--json")
	if !strings.Contains(inbox, `"class":"packet"`) || !strings.Contains(inbox, `reject negative entries`) {
		t.Fatalf("bob's inbox: %s", inbox)
	}
	screenshot(t, ctx, "direct")
}

// The issues' "done when": pin two runners, pick one in the tray's compose
// and spawn, watch each mission walk in a sibling worktree. The red gate's
// failure shows on its card by the failing test's name; the green one
// reaches merge_wait, its mission view shows the timeline, the gate's
// output and the diff, and one signed landing puts the agent's commit on
// main.
func TestBrowserSpawnWalksToMergeWaitAndLands(t *testing.T) {
	longtest.Need(t, "the tray in a real browser")
	o := demoBrain(t, true)
	agent := filepath.Join(t.TempDir(), "agent.sh")
	if err := os.WriteFile(agent, []byte("#!/bin/sh\ntest -f \"$1\" || exit 9\necho '// spawned' >> core/ledger.go\ngit commit -qam 'agent work'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	redGate := `echo '=== RUN   TestLedgerNegative'; echo '--- FAIL: TestLedgerNegative (0.00s)'; echo '    ledger_test.go:12: a negative entry was accepted'; echo FAIL; exit 1`
	pin := func(id, gate string) string {
		return fmt.Sprintf("[[runner]]\nid = %q\ncapability = \"build-runner\"\ncommand = [%q, \"{packet_file}\"]\ngate_command = %q\nworkspace_allowlist = [%q]\ntimeout_secs = 60\n", id, agent, gate, filepath.Dir(o.dir))
	}
	pins := pin("build-1", "grep -q spawned core/ledger.go && echo proved") + "\n" + pin("build-red", redGate)
	if err := os.WriteFile(filepath.Join(o.dir, ".git", "m1nd", "runners.toml"), []byte(pins), 0o600); err != nil {
		t.Fatal(err)
	}
	o.url = o.serve()
	o.runnerd("--announce-interval", "200ms")
	ctx := browser(t)
	open(t, ctx, o.url)
	// The announce moves no ref: the policy is read again on the next refresh.
	until(t, ctx, "spawn to be offered on both runners", `fetch('/api/policy').then(r => r.json()).then(p => p.modes.spawn.available && p.build_runners.length === 2)`)
	open(t, ctx, o.url)
	o.withPasskey(ctx)
	// With a passkey, the gates that prove work are the human's: the tray
	// lists both pins as waiting, and one signed gesture approves them.
	// (The demo approved a build-1 of its own: this one is changed.)
	until(t, ctx, "the runner pins to wait for approval", `!document.querySelector('#pins').hidden && !document.querySelector('#pins-go').hidden && document.querySelectorAll('#pins-list li[data-state="new"], #pins-list li[data-state="changed"]').length === 2`)
	click(t, ctx, `#pins-go`)
	until(t, ctx, "the approval's confirm naming the gates and the key", `document.querySelector('#confirm').open && document.querySelector('#confirm-binds-list').textContent.includes('runner build-1: its gate "grep -q spawned core/ledger.go && echo proved" proves its work, signed by runnerd key ')`)
	screenshot(t, ctx, "pins-confirm")
	click(t, ctx, `#confirm-ok`)
	until(t, ctx, "the pins approved", `document.querySelectorAll('#pins-list li[data-state="approved"]').length === 2 && document.querySelector('#pins-go').hidden`)
	o.wantPasskeyProof("refs/m1nd/pins")
	mainBefore := strings.TrimSpace(o.gitOut("rev-parse", "main"))
	click(t, ctx, `#open-compose`)
	run(t, ctx, chromedp.SetValue(chromedp.CSS(`#compose-block`), "sb_demo_brain_core"))
	if disabled := eval[bool](t, ctx, `document.querySelector('input[value="spawn"]').disabled`); disabled {
		t.Fatal("spawn is disabled with a live pinned runner")
	}
	click(t, ctx, `input[value="spawn"]`)
	// Spawn shows the runner picker and no agent to deliver to.
	if got := eval[string](t, ctx, `[...document.querySelectorAll('#compose-runner option')].map(o => o.value).join(' ')`); got != "build-1 build-red" {
		t.Fatalf("the runner picker offers %q", got)
	}
	if !eval[bool](t, ctx, `!!document.querySelector('#compose-runner').offsetParent && !document.querySelector('#compose-agent').offsetParent`) {
		t.Fatal("spawn does not show the runner picker alone")
	}
	spawn := func(runner string) string {
		t.Helper()
		run(t, ctx, chromedp.SetValue(chromedp.CSS(`#compose-runner`), runner))
		eval[bool](t, ctx, `(document.querySelector('#compose-runner').dispatchEvent(new Event('change')), true)`)
		if note := eval[string](t, ctx, `document.querySelector('#compose-note').textContent`); !strings.HasPrefix(note, "spawn: runner "+runner+" runs") {
			t.Fatalf("the note says %q", note)
		}
		before := eval[[]string](t, ctx, `[...document.querySelectorAll('#cards .card')].map(c => c.dataset.mission)`)
		click(t, ctx, `#compose-go`)
		var id string
		until(t, ctx, "the word that "+runner+" accepted", `[...document.querySelectorAll('#status .msg')].some(m => m.textContent.startsWith('runner `+runner+` accepted msn_'))`)
		for _, m := range eval[[]string](t, ctx, `[...document.querySelectorAll('#status .msg')].map(m => m.textContent)`) {
			if rest, ok := strings.CutPrefix(m, "runner "+runner+" accepted "); ok {
				id = rest
			}
		}
		for _, b := range before {
			if b == id {
				t.Fatalf("%s was there before the spawn", id)
			}
		}
		return id
	}

	// The red gate: the card names the failing test, read from the gate's
	// output.
	red := spawn("build-red")
	redCard := fmt.Sprintf(`#cards .card[data-mission=%q]`, red)
	until(t, ctx, "the red mission to fail", `!!document.querySelector('`+redCard+`[data-phase="failed"]')`)
	until(t, ctx, "the failed card to name the failing test", `(() => { const p = document.querySelector('`+redCard+` pre.tail'); return !!p && !!p.offsetParent && p.textContent.includes('--- FAIL: TestLedgerNegative') })()`)
	if !eval[bool](t, ctx, `!!document.querySelector('#needs-you .card[data-mission="`+red+`"]')`) {
		t.Error("the failed card is not in the needs-you lane")
	}
	screenshot(t, ctx, "spawned-failed")

	// The green one, to merge wait.
	id := spawn("build-1")
	card := fmt.Sprintf(`#cards .card[data-mission=%q]`, id)
	until(t, ctx, "the spawned mission at merge wait", `!!document.querySelector('#needs-you .card[data-mission="`+id+`"][data-phase="merge_wait"]')`)
	screenshot(t, ctx, "spawned-merge-wait")

	// The mission view: a click on the card.
	click(t, ctx, card)
	until(t, ctx, "the mission view", `document.querySelector('#mission').open && document.querySelector('#mission').dataset.mission === '`+id+`' && !!document.querySelector('#mission').dataset.ready`)
	run(t, ctx, chromedp.WaitVisible(chromedp.CSS(`#mission .mv-timeline`)), chromedp.WaitVisible(chromedp.CSS(`#mission pre.gate-output`)),
		chromedp.WaitVisible(chromedp.CSS(`#mission .file-diff[data-path="core/ledger.go"] pre.diff`)))
	view := eval[map[string]string](t, ctx, `(() => { const q = (s) => { const e = document.querySelector('#mission ' + s); return e && e.offsetParent ? e.innerText : '' };
		return {timeline: q('.mv-timeline'), ask: q('.mv-ask'), gate: q('.mv-gate'), work: q('.mv-work'), diff: q('.file-diff[data-path="core/ledger.go"] pre.diff')} })()`)
	for _, phase := range []string{"#1", "judging", "executing", "gate", "merge wait", "runnerd:build-1", "APPROVE"} {
		if !strings.Contains(view["timeline"], phase) {
			t.Errorf("the timeline lacks %q: %s", phase, view["timeline"])
		}
	}
	// The ask is Markdown, shown rendered: its heading without the "#".
	if !strings.Contains(view["ask"], "Mission packet — ") || strings.Contains(view["ask"], "# Mission") || eval[int](t, ctx, `document.querySelectorAll('#mission .mv-ask .md h4, #mission .mv-ask .md h5').length`) < 2 {
		t.Errorf("the ask shows %q", view["ask"])
	}
	if !strings.Contains(view["gate"], "grep -q spawned core/ledger.go && echo proved") || !strings.Contains(view["gate"], "exit 0") || !strings.Contains(view["gate"], "proved") {
		t.Errorf("the gate shows %q", view["gate"])
	}
	if !strings.Contains(view["work"], "m1nd/"+id+" → main") || !strings.Contains(view["work"], "agent work") || !strings.Contains(view["work"], "1 file changed · +1 −0") {
		t.Errorf("the work shows %q", view["work"])
	}
	if !strings.Contains(view["diff"], "+// spawned") {
		t.Errorf("the diff shows %q", view["diff"])
	}
	screenshot(t, ctx, "mission-view")
	eval[bool](t, ctx, `(document.querySelector('#mission .mv-gate').scrollIntoView(), true)`)
	screenshot(t, ctx, "mission-view-gate-and-diff")

	// Landing from the view onto a main worktree with an uncommitted
	// change: refused worktree_dirty at the options, before any confirm,
	// the view says so, and nothing moves.
	ledger := filepath.Join(o.dir, "core", "ledger.go")
	clean, err := os.ReadFile(ledger)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ledger, append(clean, []byte("// the human's own edit\n")...), 0o644); err != nil {
		t.Fatal(err)
	}
	refs := o.gitOut("for-each-ref", "--format=%(objectname) %(refname)")
	click(t, ctx, `#mission button.land`)
	until(t, ctx, "the refusal in the view", `document.querySelector('#mission').open && (document.querySelector('#mission .mv-said.error') || {}).textContent?.startsWith('refused: worktree_dirty: main is checked out in ')`)
	screenshot(t, ctx, "land-refused-dirty")
	if after := o.gitOut("for-each-ref", "--format=%(objectname) %(refname)"); after != refs {
		t.Fatalf("a refused landing moved refs:\n%s\nwas\n%s", after, refs)
	}
	if err := os.WriteFile(ledger, clean, 0o644); err != nil {
		t.Fatal(err)
	}
	run(t, ctx, chromedp.KeyEvent(kb.Escape))
	until(t, ctx, "the view to close", `!document.querySelector('#mission').open`)

	// Land: the confirm names the block and the merge, the passkey signs.
	click(t, ctx, card+` button.land`)
	until(t, ctx, "the landing's confirm", `document.querySelector('#confirm').open`)
	if text := eval[string](t, ctx, `document.querySelector('#confirm-text').textContent`); !strings.Contains(text, "Block core (sb_demo_brain_core).") || !strings.Contains(text, "merges m1nd/"+id+" (1 commit, +1 −0) into main") {
		t.Errorf("the landing's confirm says %q", text)
	}
	click(t, ctx, `#confirm-ok`)
	until(t, ctx, "the spawned mission landed", `!!document.querySelector('`+card+`[data-phase="landed"]')`)
	until(t, ctx, "the landing's word", `[...document.querySelectorAll('#status .msg')].some(m => m.textContent.startsWith('landed `+id+`: fast-forward m1nd/`+id+` into main · receipt ✓ store v'))`)
	screenshot(t, ctx, "spawned-landed")
	o.wantPasskeyProof("refs/m1nd/store")
	// Main moved: it is the agent's commit, made in the sibling worktree,
	// and the main worktree has it checked out, clean.
	tip := strings.TrimSpace(o.gitOut("rev-parse", "m1nd/"+id))
	if got := strings.TrimSpace(o.gitOut("rev-parse", "main")); got != tip || got == mainBefore {
		t.Fatalf("main is at %s (was %s), want the agent's commit %s", got, mainBefore, tip)
	}
	if subject := strings.TrimSpace(o.gitOut("log", "-1", "--format=%s", "main")); subject != "agent work" {
		t.Fatalf("main's tip is %q", subject)
	}
	if st := o.gitOut("status", "--porcelain", "--untracked-files=no"); st != "" {
		t.Fatalf("the main worktree after the landing: %q", st)
	}
	if b, err := os.ReadFile(filepath.Join(o.dir, "core", "ledger.go")); err != nil || !strings.Contains(string(b), "// spawned") {
		t.Fatalf("core/ledger.go in the main worktree lacks the work: %v", err)
	}
	log := o.m1nd("mission", "log", id)
	for _, phase := range []string{"judging", "executing", "gate", "merge_wait", "landed"} {
		if !strings.Contains(log, phase) {
			t.Errorf("mission log lacks %s:\n%s", phase, log)
		}
	}
	// The block now lists the landed mission beside it.
	until(t, ctx, "core to list the landed mission", `!!document.querySelector('#block-sb_demo_brain_core .block-missions li[data-phase="landed"] .mission-link[data-mission="`+id+`"]')`)
	o.wantVerifyClean()
}

// The bell goes to the needs-you lane; compose opens in view and shows
// only its mode's fields; a writable owner shows no read-only banner.
func TestBrowserBellAndComposeFields(t *testing.T) {
	longtest.Need(t, "the tray in a real browser")
	o := demoOwner(t, false)
	ctx := browser(t)
	open(t, ctx, o.url)
	if !eval[bool](t, ctx, `document.querySelector('#read-only-banner').offsetParent === null`) {
		t.Error("a writable owner shows the read-only banner")
	}
	// The tray scrolled away from the lane, then the bell.
	eval[bool](t, ctx, `(document.querySelector('#tray-body').scrollTop = 1e6, true)`)
	if eval[bool](t, ctx, `document.querySelector('#needs-you').getBoundingClientRect().bottom > 0`) {
		t.Log("the tray is too short to scroll the lane away: the scroll is not proved")
	}
	click(t, ctx, `#bell`)
	until(t, ctx, "the lane in view and focused", `(() => { const r = document.querySelector('#needs-you').getBoundingClientRect();
		return r.top > -1 && r.top < innerHeight / 2 && document.activeElement.closest('#needs-you') && document.activeElement.dataset.phase === 'merge_wait' })()`)
	screenshot(t, ctx, "bell")
	// The bell works with the tray collapsed too: it opens it.
	click(t, ctx, `#tray-toggle`)
	until(t, ctx, "the tray collapsed", `document.querySelector('#tray').classList.contains('collapsed')`)
	click(t, ctx, `#bell`)
	until(t, ctx, "the tray open at the lane", `!document.querySelector('#tray').classList.contains('collapsed') && !!document.querySelector('#needs-you').offsetParent`)

	// Compose: in view, focused, and only the chosen mode's fields.
	eval[bool](t, ctx, `(window.scrollTo(0, document.body.scrollHeight), true)`)
	click(t, ctx, `#open-compose`)
	until(t, ctx, "compose in view and focused", `(() => { const r = document.querySelector('#compose').getBoundingClientRect(); return r.top >= 0 && r.top < innerHeight && document.activeElement.id === 'compose-block' })()`)
	visible := func(sel string) bool { return eval[bool](t, ctx, `!!document.querySelector('`+sel+`').offsetParent`) }
	for _, m := range []struct {
		mode          string
		agent, runner bool
	}{{"clipboard", false, false}, {"direct", true, false}, {"clipboard", false, false}} {
		click(t, ctx, `input[value="`+m.mode+`"]`)
		if agent, runner := visible(`#compose-agent`), visible(`#compose-runner`); agent != m.agent || runner != m.runner {
			t.Errorf("%s shows the agent field %v and the runner picker %v", m.mode, agent, runner)
		}
	}
	screenshot(t, ctx, "compose")
}

// registrationCode reads the one-time code `m1nd serve` printed after its
// URL.
func (o *trayOwner) registrationCode() string {
	o.t.Helper()
	for range 3 {
		line, err := o.said.ReadString('\n')
		if err != nil {
			o.t.Fatalf("m1nd serve printed no registration code: %v", err)
		}
		if m := regexp.MustCompile(`^register a passkey in the tray with code ([A-Z2-7]{4}-[A-Z2-7]{4})`).FindStringSubmatch(line); m != nil {
			return m[1]
		}
	}
	o.t.Fatal("m1nd serve printed no registration code")
	return ""
}

// virtualAuthenticator gives the page a passkey authenticator through the
// DevTools WebAuthn domain: a platform authenticator that verifies its user
// and simulates the touch.
func virtualAuthenticator(t *testing.T, ctx context.Context) {
	t.Helper()
	if _, err := chromedp.Call(ctx, webauthn.Enable, webauthn.EnableParams{}); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(ctx, webauthn.AddVirtualAuthenticator, webauthn.AddVirtualAuthenticatorParams{Options: &webauthn.VirtualAuthenticatorOptions{
		Protocol: webauthn.AuthenticatorProtocolCtap2, Transport: webauthn.AuthenticatorTransportInternal,
		HasResidentKey: true, HasUserVerification: true, IsUserVerified: true, AutomaticPresenceSimulation: true,
	}}); err != nil {
		t.Fatal(err)
	}
}

// registerPasskey registers the brain's first passkey in the page as the
// owner does: types the code and a label, presses register, and waits for
// the page to say so. The page needs an authenticator (virtualAuthenticator).
func registerPasskey(t *testing.T, ctx context.Context, code, label string) {
	t.Helper()
	run(t, ctx, chromedp.SendKeys(chromedp.CSS(`#passkey-code`), code),
		chromedp.SendKeys(chromedp.CSS(`#passkey-label`), label))
	click(t, ctx, `#passkey-go`)
	until(t, ctx, "the passkey registered", fmt.Sprintf(`document.querySelector('#passkey-note').textContent === %q && getComputedStyle(document.querySelector('.passkey-fields')).display === 'none'`, "passkey registered: "+label))
	until(t, ctx, "the header to name the passkey", fmt.Sprintf(`document.querySelector('#passkey-line').textContent === %q`, "passkey: "+label))
}

// withPasskey gives the open page an authenticator, registers the
// owner's first passkey with the code `m1nd serve` printed, and logs the
// page in with it (its Log in button), so the page signs gestures and
// holds its live stream.
func (o *trayOwner) withPasskey(ctx context.Context) {
	o.t.Helper()
	o.withPasskeyOnly(ctx)
	click(o.t, ctx, `#login`)
	until(o.t, ctx, "the page to log in", `document.querySelector('#session-note').textContent.startsWith('logged in with your passkey') && document.querySelector('#login').hidden && document.body.dataset.live === 'true'`)
}

// withPasskeyOnly is withPasskey without the login: the page reads and
// polls until a gesture asks it to log in.
func (o *trayOwner) withPasskeyOnly(ctx context.Context) {
	o.t.Helper()
	code := o.registrationCode()
	virtualAuthenticator(o.t, ctx)
	registerPasskey(o.t, ctx, code, "test laptop")
	until(o.t, ctx, "the page to offer its login", `!document.querySelector('#login').hidden && document.body.dataset.live === 'false'`)
}

// The owner's first passkey: the code `m1nd serve` printed, a passkey made
// by the browser's authenticator, key set 1 in refs/m1nd/keys, and the
// code refused the second time.
func TestBrowserRegistersTheFirstPasskey(t *testing.T) {
	longtest.Need(t, "the tray in a real browser")
	o := demoBrain(t, false)
	o.url = o.serve()
	code := o.registrationCode()
	ctx := browser(t)
	open(t, ctx, o.url)
	virtualAuthenticator(t, ctx)
	if !eval[bool](t, ctx, `!document.querySelector('#passkey').hidden && document.querySelector('#passkey-line').hidden`) {
		t.Fatal("a brain without a passkey shows no register panel")
	}
	screenshot(t, ctx, "passkey-before")
	registerPasskey(t, ctx, strings.ToLower(code), "test laptop")
	screenshot(t, ctx, "passkey-after")

	git := exec.Command("git", "cat-file", "blob", "refs/m1nd/keys:keys.json")
	git.Dir, git.Env = o.dir, o.env
	out, err := git.Output()
	if err != nil {
		t.Fatalf("git cat-file: %v", err)
	}
	var set struct {
		Schema  string `json:"schema"`
		Version int    `json:"version"`
		Keys    []struct {
			CredentialID string `json:"credential_id"`
			PublicKey    string `json:"public_key"`
			Label        string `json:"label"`
		} `json:"keys"`
	}
	if err := json.Unmarshal(out, &set); err != nil || set.Schema != "m1nd-passkeys-v0" || set.Version != 1 || len(set.Keys) != 1 || set.Keys[0].Label != "test laptop" || set.Keys[0].PublicKey == "" {
		t.Fatalf("keys.json: %s (%v)", out, err)
	}
	// The key stored is the one the authenticator signs with: an assertion
	// made in the page holds under rules.VerifyProof.
	challenge := bytes.Repeat([]byte{7}, 32)
	proof, err := chromedp.Run(ctx, chromedp.Evaluate[rules.Proof](fmt.Sprintf(`navigator.credentials.get({publicKey: {challenge: fromB64url(%q), rpId: 'localhost',
		allowCredentials: [{type: 'public-key', id: fromB64url(%q)}]}}).then(a => ({credential_id: toB64url(a.rawId),
		authenticator_data: toB64url(a.response.authenticatorData), client_data_json: toB64url(a.response.clientDataJSON), signature: toB64url(a.response.signature)}))`,
		base64.RawURLEncoding.EncodeToString(challenge), set.Keys[0].CredentialID), chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatal(err)
	}
	if err := rules.VerifyProof(&proof, rules.PublicKey{CredentialID: set.Keys[0].CredentialID, PKIX: set.Keys[0].PublicKey}, challenge); err != nil {
		t.Fatalf("an assertion by the registered passkey: %v", err)
	}
	o.wantVerifyClean()
	// The same code again: refused, nothing written.
	reply, err := chromedp.Run(ctx, chromedp.Evaluate[map[string]any](fmt.Sprintf(`fetch('/api/passkey/register', {method: 'POST',
		headers: {'Content-Type': 'application/json'}, body: JSON.stringify({code: %q, label: 'again', credential: {}})}).then(r => r.json())`, code), chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatal(err)
	}
	if reply["refused"] != "human_gesture_required" || !strings.Contains(fmt.Sprint(reply["lesson"]), `press "add another passkey" in the tray`) {
		t.Fatalf("the code again: %v", reply)
	}
	if n := strings.Count(o.gitOut("rev-list", "refs/m1nd/keys"), "\n"); n != 1 {
		t.Fatalf("refs/m1nd/keys has %d commits", n)
	}
	// Reloaded, the page shows the passkey quietly and no panel.
	open(t, ctx, o.url)
	if !eval[bool](t, ctx, `document.querySelector('#passkey').hidden && document.querySelector('#passkey-line').textContent === 'passkey: test laptop'`) {
		t.Fatal("a registered brain still offers the register panel")
	}
}

func (o *trayOwner) gitOut(args ...string) string {
	o.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir, cmd.Env = o.dir, o.env
	out, err := cmd.Output()
	if err != nil {
		o.t.Fatalf("git %v: %v", args, err)
	}
	return string(out)
}

// keySet is refs/m1nd/keys:keys.json as git shows it.
type keySet struct {
	Version int `json:"version"`
	Keys    []struct {
		CredentialID string `json:"credential_id"`
		Label        string `json:"label"`
	} `json:"keys"`
}

func (o *trayOwner) keySet() (keySet, string) {
	o.t.Helper()
	var set keySet
	if err := json.Unmarshal([]byte(o.gitOut("cat-file", "blob", "refs/m1nd/keys:keys.json")), &set); err != nil {
		o.t.Fatal(err)
	}
	return set, o.gitOut("rev-parse", "refs/m1nd/keys")
}

func (k keySet) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "v%d", k.Version)
	for _, p := range k.Keys {
		fmt.Fprintf(&b, " %s=%s", p.Label, p.CredentialID)
	}
	return b.String()
}

// A second passkey is added in the page and signed by the first; the first
// is removed, signed by itself; the last one cannot be removed; the kept
// key signs a landing; and a bare remote's pre-receive takes the history.
func TestBrowserAddsAndRemovesAPasskey(t *testing.T) {
	longtest.Need(t, "the tray in a real browser")
	o := demoOwner(t, false)
	ctx := browser(t)
	open(t, ctx, o.url)
	o.withPasskey(ctx)
	v1, _ := o.keySet()
	if len(v1.Keys) != 1 {
		t.Fatalf("keys after registration: %s", v1)
	}
	first := v1.Keys[0].CredentialID
	until(t, ctx, "the passkey list", `!document.querySelector('#keys').hidden && document.querySelectorAll('#keys-list li').length === 1`)
	if text := eval[string](t, ctx, `document.querySelector('#keys-list li').textContent`); !strings.Contains(text, "test laptop") || !strings.Contains(text, "added 20") || !strings.Contains(text, "fingerprint ") {
		t.Fatalf("the passkey list says %q", text)
	}

	// Add: the authenticator makes a second passkey, the first signs it.
	run(t, ctx, chromedp.SendKeys(chromedp.CSS(`#keys-label`), "spare key"))
	click(t, ctx, `#keys-go`)
	until(t, ctx, "the confirm of what the signature binds", `document.querySelector('#confirm').open && document.querySelector('#confirm-binds-list').textContent.includes('adding passkey "spare key" (fingerprint ')`)
	click(t, ctx, `#confirm-ok`)
	until(t, ctx, "the passkey added", `document.querySelector('#keys-note').textContent === 'passkey added: spare key — key set v2, 2 passkeys' && document.querySelectorAll('#keys-list li').length === 2`)
	screenshot(t, ctx, "passkey-added")
	v2, _ := o.keySet()
	if v2.Version != 2 || len(v2.Keys) != 2 || v2.Keys[0].CredentialID != first || v2.Keys[1].Label != "spare key" || v2.Keys[1].CredentialID == first {
		t.Fatalf("keys after the add: %s", v2)
	}
	second := v2.Keys[1].CredentialID
	o.wantPasskeyProof("refs/m1nd/keys")
	o.wantProofBy("refs/m1nd/keys", first)

	// Remove the first, signed by itself (the page asks which key signs).
	click(t, ctx, fmt.Sprintf(`#keys-list li[data-credential=%q] button.remove-key`, first))
	until(t, ctx, "the confirm", `document.querySelector('#confirm').open`)
	click(t, ctx, `#confirm-ok`)
	until(t, ctx, "the passkey removed", `document.querySelector('#keys-note').textContent === 'passkey removed: test laptop — key set v3, 1 passkey' && document.querySelectorAll('#keys-list li').length === 1`)
	v3, head3 := o.keySet()
	if v3.Version != 3 || len(v3.Keys) != 1 || v3.Keys[0].CredentialID != second {
		t.Fatalf("keys after the removal: %s", v3)
	}
	o.wantPasskeyProof("refs/m1nd/keys")
	if line := eval[string](t, ctx, `document.querySelector('#passkey-line').textContent`); line != "passkey: spare key" {
		t.Fatalf("the header says %q", line)
	}

	// The last passkey: refused with its code and lesson before any
	// confirm, nothing written.
	click(t, ctx, fmt.Sprintf(`#keys-list li[data-credential=%q] button.remove-key`, second))
	until(t, ctx, "the refusal", `document.querySelector('#keys-note').textContent === 'refused: invalid_transition: a brain that had a passkey keeps one: add the new passkey before removing the old (with none, the terminal would silently land work again)'`)
	screenshot(t, ctx, "last-passkey-refused")
	if v, head := o.keySet(); head != head3 || v.Version != 3 {
		t.Fatalf("refusing the last key moved refs/m1nd/keys to %s", v)
	}

	// A later gesture: the kept key signs the landing.
	click(t, ctx, cardOf("merge_wait")+` button.land`)
	until(t, ctx, "the landing's confirm", `document.querySelector('#confirm').open`)
	click(t, ctx, `#confirm-ok`)
	until(t, ctx, "the mission to land", `!!document.querySelector('`+cardOf("landed")+`') && !document.querySelector('`+cardOf("merge_wait")+`')`)
	o.wantPasskeyProof("refs/m1nd/store")
	o.wantProofBy("refs/m1nd/store", second)
	o.wantVerifyClean()
	o.wantRemoteTakesIt()
}

// wantProofBy says the newest commit at ref is proven by credential id.
func (o *trayOwner) wantProofBy(ref, id string) {
	o.t.Helper()
	body := o.gitOut("log", "-1", "--format=%B", ref)
	m := regexp.MustCompile(`(?m)^M1nd-Proof: (\S+)$`).FindStringSubmatch(body)
	if m == nil {
		o.t.Fatalf("%s: no proof:\n%s", ref, body)
	}
	p, err := rules.DecodeProof(m[1])
	if err != nil || p.CredentialID != id {
		o.t.Fatalf("%s: proven by %v (%v), want %s", ref, p, err, id)
	}
}

// TestBrowserLookAlikeLandingUnderAnAgentsHammering: two look-alike
// missions wait in merge_wait on one block with one candidate — the demo's
// (A) and a copy (B). An agent (any local process, with the tray's own
// Origin) opens every event stream it can and hammers POST
// /api/gesture/options for A, before and while the human acts: with the
// brain's passkey registered it holds no session, so it gets a few
// streams of its own and no gesture at all (issue 40). The human's page,
// read-only until then, logs in with the passkey when asked to land B,
// gets its live stream, and lands B: the confirm shows what the signature
// binds (B, its letter, the store change), the virtual authenticator
// signs, and only B lands; A still waits, main does not hold A's branch,
// and the store's new import names B.
func TestBrowserLookAlikeLandingUnderAnAgentsHammering(t *testing.T) {
	longtest.Need(t, "the tray in a real browser")
	o := demoOwner(t, false)
	ctx := browser(t)
	open(t, ctx, o.url)
	o.withPasskeyOnly(ctx)
	a := eval[string](t, ctx, `document.querySelector('`+cardOf("merge_wait")+`').dataset.mission`)
	var shownA struct {
		Head chain.Letter `json:"head"`
	}
	if err := json.Unmarshal([]byte(o.m1nd("mission", "show", a, "--json")), &shownA); err != nil {
		t.Fatal(err)
	}
	// B: a new mission on A's block, at merge_wait with A's gate and candidate.
	var opened struct {
		MissionID string `json:"mission_id"`
	}
	json.Unmarshal([]byte(o.m1nd("mission", "new", "--block", shownA.Head.BlockID, "--json")), &opened)
	b := opened.MissionID
	next, err := chain.DecodeLetter([]byte(o.m1nd("mission", "next", b, "--phase", "merge_wait")))
	if err != nil {
		t.Fatal(err)
	}
	next.Gate, next.ReceiptCandidate, next.Verdict = shownA.Head.Gate, shownA.Head.ReceiptCandidate, shownA.Head.Verdict
	o.postSigned(next) // runner build-1's, as A is: one can land as the other
	until(t, ctx, "two merge_wait cards", `document.querySelectorAll('`+cardOf("merge_wait")+`').length === 2`)
	mainBefore := strings.TrimSpace(o.gitOut("rev-parse", "main"))

	// The agent takes every event stream it can: the ones without a
	// session, and no more.
	held := 0
	for range tray.MaxStreams {
		req, _ := http.NewRequest("GET", o.url+"api/events", nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode == http.StatusOK {
			held++
			t.Cleanup(func() { resp.Body.Close() })
		} else {
			resp.Body.Close()
		}
	}
	if held == 0 || held >= tray.MaxStreams/2 {
		t.Fatalf("the agent, with no session, holds %d of the owner's %d streams", held, tray.MaxStreams)
	}
	if live := eval[string](t, ctx, `document.body.dataset.live`); live != "false" {
		t.Fatalf("the page before the human logs in: live %q, want a read-only page that polls", live)
	}

	// The agent asks for A's landing over and over: with no session it is
	// turned away every time, and it keeps hammering while the human lands B.
	body := fmt.Sprintf(`{"gesture":"land","mission_id":%q}`, a)
	ask := func() int {
		req, _ := http.NewRequest("POST", o.url+"api/gesture/options", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Origin", strings.TrimSuffix(o.url, "/"))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	statuses := map[int]int{}
	for range 20 {
		statuses[ask()]++
	}
	if statuses[403] != 20 {
		t.Fatalf("the agent's 20 asks for A got %v, want 20 turned away", statuses)
	}
	stop, hammered := make(chan struct{}), make(chan int)
	go func() {
		n := 0
		defer func() { hammered <- n }()
		for {
			select {
			case <-stop:
				return
			default:
			}
			if ask() != 0 {
				n++
			}
		}
	}()
	cardB := fmt.Sprintf(`#cards .card[data-mission=%q]`, b)
	click(t, ctx, cardB+` button.land`)
	until(t, ctx, "the landing's confirm with what it binds", `document.querySelector('#confirm').open && !document.querySelector('#confirm-binds').hidden`)
	binds := eval[string](t, ctx, `document.querySelector('#confirm-binds-list').textContent`)
	if !strings.Contains(binds, "landing "+b+" of block "+shownA.Head.BlockID) || strings.Contains(binds, a) || !strings.Contains(binds, "the receipt imported at store v3") {
		t.Errorf("the confirm says the signature binds %q", binds)
	}
	screenshot(t, ctx, "look-alike-confirm")
	click(t, ctx, `#confirm-ok`)
	until(t, ctx, "B to land", `!!document.querySelector('`+cardB+`[data-phase="landed"]')`)
	close(stop)
	if n := <-hammered; n < 16 { // turned away cheaply, before anything is prepared
		t.Errorf("the agent's hammering got only %d answers", n)
	}
	// Logged in, the human's page has a live stream of its own, though the
	// agent still holds every stream it could.
	until(t, ctx, "the human's live stream", `document.body.dataset.live === 'true' && events && events.readyState === 1`)
	if !strings.Contains(eval[string](t, ctx, `document.querySelector('#session-note').textContent`), "logged in with your passkey") {
		t.Error("the page does not say it is logged in")
	}
	screenshot(t, ctx, "look-alike-landed")
	var after struct {
		Head chain.Letter `json:"head"`
	}
	json.Unmarshal([]byte(o.m1nd("mission", "show", a, "--json")), &after)
	if after.Head.Phase != chain.PhaseMergeWait {
		t.Fatalf("A is %s after the human landed B", after.Head.Phase)
	}
	if got := strings.TrimSpace(o.gitOut("rev-parse", "main")); got != mainBefore {
		t.Fatalf("main moved to %s: the landing of B merged something", got)
	}
	if out, err := exec.Command("git", "-C", o.dir, "merge-base", "--is-ancestor", "m1nd/"+a, "main").CombinedOutput(); err == nil {
		t.Fatalf("main holds A's branch %s", out)
	}
	if msg := o.gitOut("log", "-1", "--format=%B", "refs/m1nd/store"); !strings.Contains(msg, "M1nd-Mission: "+b) || !strings.Contains(msg, "M1nd-Origin: human-passkey") {
		t.Fatalf("the import does not name B:\n%s", msg)
	}
	o.wantVerifyClean()
}

// TestBrowserShowsTheLandingQueue: three missions wait, ready, each card
// titled by its ask; main moves under them (runnerd stopped), and every
// card and the mission view say so, land disabled; runnerd comes back, its
// queue re-gates them in order — the page shows re-gating — and then one
// is ready, one conflicts with main (its path) and one's gate failed on
// the merge (its output); only the ready one can land, and it lands onto a
// tree its gate passed on.
func TestBrowserShowsTheLandingQueue(t *testing.T) {
	longtest.Need(t, "the tray in a real browser")
	o := demoBrain(t, true)
	agent := filepath.Join(t.TempDir(), "agent.sh")
	script := `#!/bin/sh
case "$(cat "$1")" in
*"add a note"*) echo note > core/note.txt ;;
*"shared file"*) echo mission > core/shared.txt ;;
*"use the ledger"*) echo use > core/use.txt ;;
esac
echo "agent: wrote my file"
git add -A && git commit -qm "agent: $M1ND_MISSION"
`
	if err := os.WriteFile(agent, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	record := filepath.Join(t.TempDir(), "gated")
	gate := `sleep 0.6; t=$(git rev-parse 'HEAD^{tree}'); if [ -f core/use.txt ] && [ -f core/forbid.txt ]; then echo 'gate: use.txt and forbid.txt clash'; exit 1; fi; echo "$t" >> ` + record + `; echo 'gate: ok'`
	// The gate writes where its pin grants it, as the kernel contains it.
	pins := fmt.Sprintf("[[runner]]\nid = \"build-1\"\ncapability = \"build-runner\"\ncommand = [%q, \"{packet_file}\"]\ngate_command = %q\nworkspace_allowlist = [%q]\ntimeout_secs = 60\nwrite_paths = [%q]\n", agent, gate, filepath.Dir(o.dir), filepath.Dir(record))
	if err := os.WriteFile(filepath.Join(o.dir, ".git", "m1nd", "runners.toml"), []byte(pins), 0o600); err != nil {
		t.Fatal(err)
	}
	o.url = o.serve()
	startRunnerd := func() *exec.Cmd { return o.runnerd("--announce-interval", "200ms", "--queue-interval", "200ms") }
	rd := startRunnerd()
	ctx := browser(t)
	open(t, ctx, o.url)
	until(t, ctx, "spawn to be offered", `fetch('/api/policy').then(r => r.json()).then(p => p.modes.spawn.available)`)
	open(t, ctx, o.url)
	o.withPasskey(ctx)
	approvePins(t, ctx, 1)

	asks := []string{"add a note to core", "write the shared file in core", "use the ledger in core"}
	ids := make([]string, len(asks))
	for i, ask := range asks {
		var reply struct {
			MissionID string `json:"mission_id"`
		}
		if err := json.Unmarshal([]byte(o.m1nd("spawn", "--runner", "build-1", "--block", "sb_demo_brain_core", "--ask", ask, "--json")), &reply); err != nil {
			t.Fatal(err)
		}
		ids[i] = reply.MissionID
		until(t, ctx, ask+" to wait ready", fmt.Sprintf(`!!document.querySelector('#cards .card[data-mission=%q][data-phase="merge_wait"] .queue[data-queue="ready"]')`, ids[i]))
	}
	okID, conflictID, failID := ids[0], ids[1], ids[2]
	card := func(id string) string { return fmt.Sprintf(`#cards .card[data-mission=%q]`, id) }
	for i, id := range ids {
		if got := eval[string](t, ctx, `document.querySelector('`+card(id)+` .card-title').textContent`); got != asks[i] {
			t.Errorf("the card of %s is titled %q, want its ask %q", id, got, asks[i])
		}
		if eval[bool](t, ctx, `document.querySelector('`+card(id)+` button.land').disabled`) {
			t.Errorf("the ready %s cannot be landed", id)
		}
	}
	screenshot(t, ctx, "queue-ready")

	// runnerd stops; main moves on: every card says so, none can land.
	rd.Process.Kill()
	rd.Wait()
	for name, body := range map[string]string{"core/shared.txt": "main's own\n", "core/forbid.txt": "no use\n"} {
		if err := os.WriteFile(filepath.Join(o.dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	o.gitOut("add", "core/shared.txt", "core/forbid.txt")
	o.gitOut("commit", "-qm", "main: a shared file, and no use")
	for _, id := range ids {
		until(t, ctx, id+" to show main moved", `(() => { const c = document.querySelector('`+card(id)+`'); const b = c && c.querySelector('button.land');
			return !!c.querySelector('.queue[data-queue="target_moved"]') && c.querySelector('.queue').textContent.includes('target moved — re-gating…') && b.disabled && b.title.startsWith('not ready to land: main moved since the gate') })()`)
	}
	screenshot(t, ctx, "queue-target-moved")
	click(t, ctx, card(okID))
	until(t, ctx, "the view to say main moved", `document.querySelector('#mission').open && !!document.querySelector('#mission .mv-queue .queue[data-queue="target_moved"]') && document.querySelector('#mission-title').textContent.startsWith('add a note to core · ')`)
	if !eval[bool](t, ctx, `document.querySelector('#mission button.land').disabled`) {
		t.Error("the view offers to land a mission main moved under")
	}
	if got := eval[string](t, ctx, `document.querySelector('#mission .mv-agent').innerText`); !strings.Contains(got, "Agent output") {
		t.Errorf("the view has no agent output: %q", got)
	}
	eval[bool](t, ctx, `(document.querySelector('#mission .mv-agent summary').click(), true)`)
	until(t, ctx, "the agent's output", `document.querySelector('#mission .agent-log').textContent.includes('agent: wrote my file')`)
	run(t, ctx, chromedp.KeyEvent(kb.Escape))
	until(t, ctx, "the view to close", `!document.querySelector('#mission').open`)

	// runnerd is back: its queue re-gates in order, and the page follows.
	startRunnerd()
	until(t, ctx, "a card re-gating", `[...document.querySelectorAll('#cards .card .queue[data-queue="regating"]')].some(q => q.textContent.includes('re-gating the merge with main'))`)
	screenshot(t, ctx, "queue-regating")
	until(t, ctx, "the first ready again", `!!document.querySelector('`+card(okID)+` .queue[data-queue="ready"]') && !document.querySelector('`+card(okID)+` button.land').disabled`)
	until(t, ctx, "the second to conflict", `(() => { const q = document.querySelector('`+card(conflictID)+` .queue[data-queue="conflict"]'); return !!q && q.textContent.includes('conflicts with main: core/shared.txt') })()`)
	until(t, ctx, "the third's gate to fail on the merge", `(() => { const q = document.querySelector('`+card(failID)+` .queue[data-queue="gate_failed"]'); return !!q && q.querySelector('pre.tail').textContent.includes('gate: use.txt and forbid.txt clash') })()`)
	for _, id := range []string{conflictID, failID} {
		if !eval[bool](t, ctx, `document.querySelector('`+card(id)+` button.land').disabled`) {
			t.Errorf("%s can be landed", id)
		}
	}
	screenshot(t, ctx, "queue-states")
	click(t, ctx, card(failID))
	until(t, ctx, "the view to show the failed merge", `document.querySelector('#mission').open && document.querySelector('#mission').dataset.mission === '`+failID+`' && (document.querySelector('#mission .mv-queue pre.tail') || {}).textContent?.includes('clash')`)
	screenshot(t, ctx, "queue-gate-failed-view")
	run(t, ctx, chromedp.KeyEvent(kb.Escape))
	until(t, ctx, "the view to close", `!document.querySelector('#mission').open`)

	// The ready one lands, onto exactly what its gate passed on.
	click(t, ctx, card(okID)+` button.land`)
	until(t, ctx, "the landing's confirm", `document.querySelector('#confirm').open`)
	click(t, ctx, `#confirm-ok`)
	until(t, ctx, "the first landed", `!!document.querySelector('`+card(okID)+`[data-phase="landed"]')`)
	tree := strings.TrimSpace(o.gitOut("rev-parse", "main^{tree}"))
	if data, _ := os.ReadFile(record); !strings.Contains(string(data), tree+"\n") {
		t.Errorf("main's tree %s is not one the gate passed on:\n%s", tree, data)
	}
	o.wantVerifyClean()
}

// The keeper's notices reach the human: letters it gave up waking an
// agent for, and a woken session that ran none of m1nd's hooks, each in a
// banner at the top of the page; with nothing to say it shows nothing.
func TestBrowserShowsTheKeepersNotices(t *testing.T) {
	longtest.Need(t, "the tray in a real browser")
	o := demoBrain(t, false)
	runtime := filepath.Join(o.dir, ".git", "m1nd")
	cfg := filepath.Join(runtime, runners.ConfigFile)
	pins, _ := os.ReadFile(cfg)
	pins = append(pins, "\n[[keeper]]\nagent = \"bob\"\nclient = \"codex\"\nstart = [\"codex\", \"exec\", \"{wake}\"]\n"...)
	if err := os.WriteFile(cfg, pins, 0o600); err != nil {
		t.Fatal(err)
	}
	o.url = o.serve()
	ctx := browser(t)
	open(t, ctx, o.url)
	if !eval[bool](t, ctx, `document.querySelector('#keeper-notice').hidden`) {
		t.Fatal("a keeper notice with nothing to say")
	}
	if err := os.MkdirAll(filepath.Join(runtime, "keeper"), 0o700); err != nil {
		t.Fatal(err)
	}
	journal := `{"at":"2026-12-01T12:00:00Z","agent":"bob","event":"woke","how":"start","items":["letter:aaaaaaaaaaaa"]}
{"at":"2026-12-01T12:00:09Z","agent":"bob","event":"exited","waiting":["letter:aaaaaaaaaaaa"],"note":"the woken session ran none of m1nd's hooks, so no letter reached it: Codex runs only trusted hooks"}
{"at":"2026-12-01T12:00:09Z","agent":"bob","event":"gave_up","items":["letter:aaaaaaaaaaaa"],"note":"gave up waking bob for letter:aaaaaaaaaaaa"}
`
	if err := os.WriteFile(runners.JournalPath(runtime), []byte(journal), 0o600); err != nil {
		t.Fatal(err)
	}
	open(t, ctx, o.url)
	until(t, ctx, "the keeper's notices", `(() => { const b = document.querySelector('#keeper-notice'); return !b.hidden && b.offsetParent && b.children.length === 2 &&
		b.textContent.includes('gave up waking bob for letter:aaaaaaaaaaaa') && b.textContent.includes('ran none of m1nd') })()`)
	screenshot(t, ctx, "keeper-notice")
}
