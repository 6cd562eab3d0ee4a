//go:build linux

package testscripts

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/m1nd/m1nd/gitstore"
	"github.com/m1nd/m1nd/internal/trayclient"
	"github.com/m1nd/m1nd/runners"
	"github.com/m1nd/m1nd/testkit/gittest"
)

// TestReadmeRunsAsWritten runs the README (issue 16): every command of its
// ```sh blocks, in order, in one fresh repository named myrepo (a small Go
// module with core/, lib/ and root files, as its Quickstart says), with
// one environment throughout. Each command runs in a shell of its own and
// must exit 0; `export NAME=VALUE` lines set the environment of the
// commands after them. The ```toml block is what the operator pins in
// .git/m1nd/runners.toml, and is written there.
//
//   - Lines `#   TEXT` (a hash and three spaces) after a command are its
//     expected output: each must match a line of what it printed, in
//     order, loosely (mission ids, 12-hex ids, `1f0c…` prefixes and times
//     are wildcards, runs of blanks are blanks). Other comments are prose.
//   - Placeholder ids stand for what an earlier command printed:
//     msn_0123456789ab and msn_… for the newest mission opened or
//     spawned, the memory and follow-up ids for the ones `memory add` and
//     `followup open` recorded (readmePlaceholders).
//   - The human gestures (ratify, receipt import, land, archive) run at a
//     pseudo-terminal (testkit/pty, hence linux only): the test reads the
//     prompt and types what it asks.
//   - Daemons started with `&` run in the background until the test ends;
//     the test waits for the owner to answer and the runners to announce,
//     as a human would before the next line, and after a spawn it waits
//     for the mission to reach merge_wait before the next block.
//   - A few commands cannot run here and are skipped (readmeSkips), and a
//     few are adjusted to the sandbox (readmeRewrites); each says why, and
//     an entry that no longer matches the README fails the test, so
//     neither list can hide a drift.
func TestReadmeRunsAsWritten(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	docs := linkedDocs(t, string(readme))
	seen := &readmeSeen{skipped: map[string]bool{}, rewritten: map[string]bool{}}
	t.Run("tour", func(t *testing.T) {
		runDocs(t, seen, []readmeDoc{{"README.md", string(readme)}})
	})
	t.Run("docs", func(t *testing.T) {
		runDocs(t, seen, docs)
	})
	if t.Failed() {
		return // a run cut short saw only part of the commands
	}
	for cmd, why := range readmeSkips {
		if !seen.skipped[cmd] {
			t.Errorf("readmeSkips names %q (%s), which neither the README nor docs/ has", cmd, why)
		}
	}
	for _, rw := range readmeRewrites {
		if !seen.rewritten[rw.old] {
			t.Errorf("readmeRewrites names %q (%s), which neither the README nor docs/ has", rw.old, rw.why)
		}
	}
}

// readmeDoc is one document the test runs: its name and text.
type readmeDoc struct{ name, text string }

// readmeSeen is what the runs skipped and rewrote, across documents.
type readmeSeen struct{ skipped, rewritten map[string]bool }

// docLink is a link from the README to a topic document.
var docLink = regexp.MustCompile(`\]\((docs/[a-z0-9_-]+\.md)\)`)

// linkedDocs reads the documents the README links to under docs/, in the
// order it first links them; a document in docs/ the README does not link
// fails the test (a newcomer would never find it).
func linkedDocs(t *testing.T, readme string) []readmeDoc {
	t.Helper()
	var docs []readmeDoc
	linked := map[string]bool{}
	for _, m := range docLink.FindAllStringSubmatch(readme, -1) {
		if linked[m[1]] {
			continue
		}
		linked[m[1]] = true
		text, err := os.ReadFile(filepath.Join("..", m[1]))
		if err != nil {
			t.Fatalf("README links %s: %v", m[1], err)
		}
		docs = append(docs, readmeDoc{m[1], string(text)})
	}
	all, err := filepath.Glob(filepath.Join("..", "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range all {
		if name := "docs/" + filepath.Base(path); !linked[name] {
			t.Errorf("%s is not linked from the README", name)
		}
	}
	return docs
}

// runDocs runs the blocks of docs, in order, in one fresh myrepo.
func runDocs(t *testing.T, seen *readmeSeen, docs []readmeDoc) {
	r := newReadmeRun(t)
	r.skipped, r.rewritten = seen.skipped, seen.rewritten
	tomls := 0
	for _, doc := range docs {
		for _, b := range readmeBlocks(doc.name, doc.text) {
			switch b.lang {
			case "toml":
				if text := strings.Join(b.lines, "\n"); strings.Contains(text, "[[keeper]]") && !strings.Contains(text, "[[runner]]") {
					checkKeeperExample(t, b) // an example: pinned, it would wake agents the README mails
					continue
				}
				if tomls++; tomls > 1 {
					t.Fatalf("%s:%d: a second toml block of runners: the test knows only one runners.toml per run", b.file, b.line)
				}
				r.pinRunners(b)
			case "sh":
				r.runBlock(b)
			default:
				t.Fatalf("%s:%d: a %q block: run it here as sh, or teach this test what it is", b.file, b.line, b.lang)
			}
		}
	}
}

// readmeSkips are the README's commands that cannot run in a hermetic
// test, by their text without the trailing comment, with the reason.
var readmeSkips = map[string]string{
	"go run ./cmd/m1nd demo": "builds a demo brain and serves its tray until stopped (demo/demo_test.go and demo_hint.txtar cover it)",
	"go test ./...":          "the whole suite, this test included",
	"CGO_ENABLED=0 go install -tags urfave_cli_no_docs ./cmd/...": "installs into the user's GOBIN; this test's m1nd and m1nd-full are on PATH already (their build with the tag is .ci/run's)",
}

// readmeRewrites adjust commands to the sandbox: old is replaced by new
// (where {tmp} is the test's temp dir) wherever it occurs.
var readmeRewrites = []struct{ old, new, why string }{
	{"/srv/shop.git", "{tmp}/srv/shop.git", "the remote: a local bare repository (myrepo's origin) instead of a server's"},
	{"m1nd serve &", "m1nd serve --addr 127.0.0.1:0 &", "a free port: 7420 may be taken on a shared machine"},
	{"m1nd runnerd &", "m1nd runnerd --addr 127.0.0.1:0 &", "a free port: 7421 may be taken on a shared machine"},
	{"| less", "| cat", "the test reads the diff instead of paging it"},
	{`"/home/me/src"`, `"{tmp}"`, "the workspace allowlist: where myrepo lies here"},
}

// readmePlaceholders are the README's example ids and how the test learns
// the real one each stands for from an earlier command's output. A latest
// placeholder is the newest id printed; the others are bound once, in
// order, to the ids their pattern prints (the first memory recorded, then
// the second).
var readmePlaceholders = []struct {
	ids    []string
	re     string
	latest bool
}{
	{[]string{"msn_0123456789ab", "msn_…"}, `\b(?:opened|accepted mission) (msn_[0-9a-f]{12})\b`, true},
	{[]string{"1a2b3c4d5e6f"}, `\bmemory ([0-9a-f]{12}) recorded\b`, false},
	{[]string{"6f5e4d3c2b1a"}, `\bmemory ([0-9a-f]{12}) recorded\b`, false},
	{[]string{"9f8e7d6c5b4a"}, `\bfollow-up ([0-9a-f]{12}) opened\b`, false},
	{[]string{"5b4a3c2d1e0f"}, `\bfollow-up ([0-9a-f]{12}) opened\b`, false},
	{[]string{"0c1d2e3f4a5b"}, `(?m)^\* ([0-9a-f]{12}) .* ask +from alice +follow-up [0-9a-f]{12} opened for you by alice: which port`, true},
}

// readmeTerminal matches the commands the README says ask at the terminal.
var readmeTerminal = regexp.MustCompile(`^m1nd (skeleton ratify|receipt import|land|mission archive|runners approve)\b`)

type readmeBlock struct {
	file  string // README.md or docs/….md
	lang  string
	line  int // of the opening fence
	lines []string
}

type readmeCmd struct {
	file   string
	line   int
	text   string   // as written, heredoc included
	expect []string // its `#   ` lines
}

// readmeBlocks returns a document's fenced blocks in order.
func readmeBlocks(file, readme string) []readmeBlock {
	var blocks []readmeBlock
	var cur *readmeBlock
	for i, line := range strings.Split(readme, "\n") {
		switch {
		case cur == nil && strings.HasPrefix(line, "```"):
			cur = &readmeBlock{file: file, lang: strings.TrimSpace(strings.TrimPrefix(line, "```")), line: i + 1}
		case cur != nil && strings.TrimSpace(line) == "```":
			blocks = append(blocks, *cur)
			cur = nil
		case cur != nil:
			cur.lines = append(cur.lines, line)
		}
	}
	return blocks
}

var heredocStart = regexp.MustCompile(`<<-?\s*['"]?([A-Za-z_][A-Za-z0-9_]*)['"]?`)

// commands splits an sh block into its commands, each with the expected
// output lines that follow it.
func (b readmeBlock) commands() []readmeCmd {
	var cmds []readmeCmd
	for i := 0; i < len(b.lines); i++ {
		line := b.lines[i]
		switch {
		case strings.TrimSpace(line) == "":
			continue
		case strings.HasPrefix(line, "#"):
			if strings.HasPrefix(line, "#   ") {
				if len(cmds) == 0 {
					// Output before any command: kept, to fail in runBlock.
					cmds = append(cmds, readmeCmd{file: b.file, line: b.line + 1 + i})
				}
				c := &cmds[len(cmds)-1]
				c.expect = append(c.expect, strings.TrimSpace(line[4:]))
			}
			continue
		}
		c := readmeCmd{file: b.file, line: b.line + 1 + i, text: line}
		for strings.HasSuffix(c.text, `\`) && i+1 < len(b.lines) {
			i++
			c.text += "\n" + b.lines[i]
		}
		if m := heredocStart.FindStringSubmatch(line); m != nil {
			for i+1 < len(b.lines) {
				i++
				c.text += "\n" + b.lines[i]
				if b.lines[i] == m[1] {
					break
				}
			}
		}
		cmds = append(cmds, c)
	}
	return cmds
}

// trailingComment is a command's comment: blanks, #, a blank.
var trailingComment = regexp.MustCompile(`\s+#\s.*$`)

// bare is a command's first line without its trailing comment.
func bare(text string) string {
	first, _, _ := strings.Cut(text, "\n")
	return strings.TrimSpace(trailingComment.ReplaceAllString(first, ""))
}

// looseToken finds what an expected line may spell differently from a
// run: ids, abbreviated ids, times, blanks.
var looseToken = regexp.MustCompile(`msn_(?:[0-9a-f]{12}|…)|[0-9a-f]*…|\b[0-9a-f]{12}\b|\b\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\b|\s+`)

// loose is the regexp an expected output line stands for.
func loose(want string) *regexp.Regexp {
	var re strings.Builder
	re.WriteString(`(?m)`)
	last := 0
	for _, m := range looseToken.FindAllStringIndex(want, -1) {
		re.WriteString(regexp.QuoteMeta(want[last:m[0]]))
		tok := want[m[0]:m[1]]
		switch {
		case strings.HasPrefix(tok, "msn_"):
			re.WriteString(`msn_[0-9a-f]{12}`)
		case tok == "…":
			re.WriteString(`.*`)
		case strings.HasSuffix(tok, "…"):
			re.WriteString(`[0-9a-f]+`)
		case strings.TrimSpace(tok) == "":
			re.WriteString(`\s+`)
		case strings.Contains(tok, "T"):
			re.WriteString(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ`)
		default:
			re.WriteString(`[0-9a-f]{12}`)
		}
		last = m[1]
	}
	re.WriteString(regexp.QuoteMeta(want[last:]))
	return regexp.MustCompile(re.String())
}

type readmeRun struct {
	t         *testing.T
	tmp, repo string
	env       []string
	bound     map[string]string // placeholder → id
	skipped   map[string]bool
	rewritten map[string]bool
	runners   []string // ids pinned in runners.toml
	spawned   []string // missions spawned by the current block
}

// newReadmeRun makes myrepo: a Go module with core/, lib/ and root files,
// committed on main, whose origin is an empty bare repository; and a
// my-agent on PATH, the agent the README's runner pins: it commits a
// change to core/.
func newReadmeRun(t *testing.T) *readmeRun {
	t.Helper()
	tmp := t.TempDir()
	bin := filepath.Join(tmp, "bin")
	r := &readmeRun{t: t, tmp: tmp, repo: filepath.Join(tmp, "myrepo"), bound: map[string]string{}, skipped: map[string]bool{}, rewritten: map[string]bool{}}
	for _, kv := range gittest.Env(t) {
		switch k, v, _ := strings.Cut(kv, "="); k {
		case "M1ND_AGENT", "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE":
		case "PATH":
			r.env = append(r.env, "PATH="+bin+string(os.PathListSeparator)+v)
		default:
			r.env = append(r.env, kv)
		}
	}
	r.env = append(r.env, "TZ=UTC")
	files := map[string]string{
		"bin/my-agent":          "#!/bin/sh\n# my-agent PACKET_FILE: rejects negative entries, and commits.\nprintf '\\nfunc Reject(amount int) bool { return amount < 0 }\\n' >> core/ledger.go\ngit commit -qam 'core: reject negative entries'\n",
		"myrepo/go.mod":         "module myrepo\n\ngo 1.22\n",
		"myrepo/README.md":      "# myrepo\n",
		"myrepo/core/ledger.go": "package core\n\n// Sum sums the entries.\nfunc Sum(entries []int) (total int) {\n\tfor _, e := range entries {\n\t\ttotal += e\n\t}\n\treturn total\n}\n",
		"myrepo/lib/lib.go":     "package lib\n",
	}
	for name, body := range files {
		path := filepath.Join(tmp, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		mode := os.FileMode(0o644)
		if strings.HasPrefix(name, "bin/") {
			mode = 0o755
		}
		if err := os.WriteFile(path, []byte(body), mode); err != nil {
			t.Fatal(err)
		}
	}
	r.sh(tmp, "git init -q --bare srv/shop.git && cd myrepo && git init -q && git add -A && git commit -qm init && git remote add origin ../srv/shop.git")
	return r
}

// sh runs script in dir, failing the test unless it exits 0.
func (r *readmeRun) sh(dir, script string) string {
	r.t.Helper()
	cmd := exec.Command("sh", "-c", script)
	cmd.Dir, cmd.Env = dir, r.env
	out, err := cmd.CombinedOutput()
	if err != nil {
		r.t.Fatalf("%s: %v\n%s", script, err, out)
	}
	return string(out)
}

// pinRunners writes the README's runners.toml where the operator pins it.
// checkKeeperExample holds the README's [[keeper]] example to what
// runnerd loads, without pinning it.
func checkKeeperExample(t *testing.T, b readmeBlock) {
	path := filepath.Join(t.TempDir(), "runners.toml")
	if err := os.WriteFile(path, []byte(strings.Join(b.lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := runners.LoadConfig(path)
	if err != nil || len(cfg.Keepers) == 0 {
		t.Fatalf("%s:%d: the keeper example does not load: %v", b.file, b.line, err)
	}
}

func (r *readmeRun) pinRunners(b readmeBlock) {
	t := r.t
	toml := r.rewrite(strings.Join(b.lines, "\n") + "\n")
	dir := filepath.Join(r.repo, ".git", "m1nd")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "runners.toml"), []byte(toml), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, m := range regexp.MustCompile(`(?m)^id\s*=\s*"([^"]+)"`).FindAllStringSubmatch(toml, -1) {
		r.runners = append(r.runners, m[1])
	}
	t.Logf("%s:%d: runners.toml pinned (%v)", b.file, b.line, r.runners)
}

// rewrite applies readmeRewrites.
func (r *readmeRun) rewrite(text string) string {
	for _, rw := range readmeRewrites {
		if strings.Contains(text, rw.old) {
			r.rewritten[rw.old] = true
			text = strings.ReplaceAll(text, rw.old, strings.ReplaceAll(rw.new, "{tmp}", r.tmp))
		}
	}
	return text
}

// substitute puts the real ids in for the placeholders; a placeholder no
// command has printed yet fails the test.
func (r *readmeRun) substitute(c readmeCmd) string {
	text := c.text
	for _, p := range readmePlaceholders {
		for _, id := range p.ids {
			if !strings.Contains(text, id) {
				continue
			}
			real, ok := r.bound[p.ids[0]]
			if !ok {
				r.t.Fatalf("%s:%d: %s names %s before any command printed the id it stands for", c.file, c.line, bare(c.text), id)
			}
			text = strings.ReplaceAll(text, id, real)
		}
	}
	return text
}

// learn binds placeholders to the ids a command printed.
func (r *readmeRun) learn(out string) {
	taken := map[string]bool{}
	for _, v := range r.bound {
		taken[v] = true
	}
	for _, p := range readmePlaceholders {
		for _, m := range regexp.MustCompile(p.re).FindAllStringSubmatch(out, -1) {
			switch {
			case p.latest:
				r.bound[p.ids[0]] = m[1]
			case taken[m[1]]:
			case r.bound[p.ids[0]] == "":
				r.bound[p.ids[0]] = m[1]
				taken[m[1]] = true
			}
		}
	}
}

func (r *readmeRun) runBlock(b readmeBlock) {
	t := r.t
	r.spawned = nil
	for _, c := range b.commands() {
		if c.text == "" {
			t.Fatalf("%s:%d: output shown before any command of its block", c.file, c.line)
		}
		key := bare(c.text)
		if why, ok := readmeSkips[key]; ok {
			r.skipped[key] = true
			t.Logf("%s:%d: skipped %s: %s", c.file, c.line, key, why)
			continue
		}
		text := r.rewrite(r.substitute(c))
		key = bare(text)
		if m := regexp.MustCompile(`^export ([A-Z_][A-Z0-9_]*)=(\S+)$`).FindStringSubmatch(key); m != nil {
			r.env = append(r.env, m[1]+"="+m[2])
			t.Logf("%s:%d: %s", c.file, c.line, key)
			continue
		}
		var out string
		switch {
		case strings.HasSuffix(key, "&"):
			r.background(c, strings.TrimSpace(strings.TrimSuffix(key, "&")))
			continue
		case readmeTerminal.MatchString(key):
			out = r.atTerminal(c, text)
		default:
			cmd := exec.Command("sh", "-c", text)
			cmd.Dir, cmd.Env = r.repo, r.env
			b, err := cmd.CombinedOutput()
			out = string(b)
			if err != nil {
				t.Fatalf("%s:%d: %s: %v\n%s", c.file, c.line, key, err, out)
			}
		}
		t.Logf("%s:%d: %s\n%s", c.file, c.line, key, indent(out))
		r.expect(c, out)
		before := r.bound["msn_0123456789ab"]
		r.learn(out)
		if strings.HasPrefix(key, "m1nd spawn ") && r.bound["msn_0123456789ab"] != before {
			r.spawned = append(r.spawned, r.bound["msn_0123456789ab"])
		}
	}
	for _, id := range r.spawned {
		r.waitMergeWait(id)
	}
}

func indent(s string) string {
	s = strings.TrimRight(s, "\n")
	if s == "" {
		return "    (no output)"
	}
	return "    " + strings.ReplaceAll(s, "\n", "\n    ")
}

// expect checks a command's output against its expected lines, in order.
func (r *readmeRun) expect(c readmeCmd, out string) {
	rest := out
	for _, want := range c.expect {
		if want == "" {
			continue
		}
		re := loose(want)
		loc := re.FindStringIndex(rest)
		if loc == nil {
			r.t.Fatalf("%s:%d: %s printed no line like\n    %s\n(as %s) after what matched before; it printed:\n%s", c.file, c.line, bare(c.text), want, re, indent(out))
		}
		rest = rest[loc[1]:]
	}
}

// atTerminal runs a human gesture at a pseudo-terminal, its controlling
// terminal: it types what the prompt asks to be typed, and returns what
// the terminal showed.
func (r *readmeRun) atTerminal(c readmeCmd, text string) string {
	t := r.t
	// The shell waits a moment before it exits: the terminal closes with
	// it, and bytes the kernel has not yet passed to the reader would be
	// lost.
	cmd := exec.Command("sh", "-c", text+"\nrc=$?; sleep 0.1; exit $rc")
	cmd.Dir, cmd.Env = r.repo, r.env
	prompt := regexp.MustCompile(`Type (\S+) to confirm`)
	out, answered, err := atPTY(t, cmd, 2*time.Minute, func(screen string) []string {
		var typed []string
		for _, ask := range prompt.FindAllStringSubmatch(screen, -1) {
			typed = append(typed, ask[1])
		}
		return typed
	})
	if err != nil {
		t.Fatalf("%s:%d: %s at a terminal: %v\n%s", c.file, c.line, bare(text), err, indent(out))
	}
	if answered == 0 {
		t.Fatalf("%s:%d: %s never asked at the terminal; it showed:\n%s", c.file, c.line, bare(text), indent(out))
	}
	return out
}

// background starts a daemon the README starts with &, stopped (its whole
// process group) when the test ends, and waits until it is ready: the
// owner answers, or every pinned runner has announced itself.
func (r *readmeRun) background(c readmeCmd, command string) {
	t := r.t
	log := filepath.Join(r.tmp, fmt.Sprintf("%s-%d.log", strings.ReplaceAll(c.file, "/", "_"), c.line))
	f, err := os.Create(log)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sh", "-c", "exec "+command)
	cmd.Dir, cmd.Env = r.repo, r.env
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(15 * time.Second):
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-exited
		}
	})
	t.Logf("%s:%d: %s (in the background, log %s)", c.file, c.line, command, log)
	var ready func() (bool, string)
	switch {
	case strings.HasPrefix(command, "m1nd serve"):
		ready = func() (bool, string) {
			url, err := r.owner()
			if err != nil {
				return false, err.Error()
			}
			status, _, err := get(url + "/")
			if err != nil {
				return false, err.Error()
			}
			return status == http.StatusOK, fmt.Sprintf("%s answered %d", url, status)
		}
	case strings.HasPrefix(command, "m1nd runnerd"):
		ready = func() (bool, string) { return r.runnersLive() }
	default:
		t.Fatalf("%s:%d: the test knows no way to tell when %q is ready", c.file, c.line, command)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		ok, last := ready()
		if ok {
			return
		}
		select {
		case <-exited:
			out, _ := os.ReadFile(log)
			t.Fatalf("%s:%d: %s exited: %s\n%s", c.file, c.line, command, cmd.ProcessState, indent(string(out)))
		default:
		}
		if time.Now().After(deadline) {
			out, _ := os.ReadFile(log)
			t.Fatalf("%s:%d: %s not ready after 60s: %s\n%s", c.file, c.line, command, last, indent(string(out)))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// owner is the URL of the owner serving myrepo.
func (r *readmeRun) owner() (string, error) {
	repo, err := gitstore.Open(r.repo)
	if err != nil {
		return "", err
	}
	defer repo.Close()
	url := trayclient.Find(repo.RuntimeDir())
	if url == "" {
		return "", fmt.Errorf("no owner is running for %s", r.repo)
	}
	return url, nil
}

// runnersLive reports whether the owner lists every pinned runner as
// announced and not lost.
func (r *readmeRun) runnersLive() (bool, string) {
	url, err := r.owner()
	if err != nil {
		return false, err.Error()
	}
	live, said, err := liveRunners(url)
	if err != nil {
		return false, err.Error()
	}
	for _, id := range r.runners {
		if !live[id] {
			return false, said
		}
	}
	return len(r.runners) > 0, said
}

// waitMergeWait waits until a spawned mission has run its agent and its
// gate: the README lands it next.
func (r *readmeRun) waitMergeWait(id string) {
	t := r.t
	deadline := time.Now().Add(2 * time.Minute)
	for {
		phase := ""
		out := r.sh(r.repo, "m1nd mission heads --json")
		var heads struct {
			Missions []struct {
				MissionID string `json:"mission_id"`
				Head      struct {
					Phase string `json:"phase"`
				} `json:"head"`
			} `json:"missions"`
		}
		if err := json.Unmarshal([]byte(out), &heads); err != nil {
			t.Fatalf("m1nd mission heads --json: %v\n%s", err, out)
		}
		for _, m := range heads.Missions {
			if m.MissionID == id {
				phase = m.Head.Phase
			}
		}
		switch phase {
		case "merge_wait":
			t.Logf("%s reached merge_wait", id)
			return
		case "judging", "executing", "gate", "":
		default:
			t.Fatalf("spawned %s ended %s, not merge_wait:\n%s", id, phase, indent(r.sh(r.repo, "m1nd mission show "+id)))
		}
		if time.Now().After(deadline) {
			t.Fatalf("spawned %s still %q after 2m", id, phase)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
