// Command bench runs m1nd and its anchors side by side in one run and prints
// medians, ratios and the goal of every row of the performance table, then
// one summary table (DESIGN §9). Rows (-rows picks some, comma separated):
//
//	post          whole-process `m1nd mission post` vs git's plumbing as a
//	              bash script, and vs a static Go hello-world (the floor);
//	start         every other hot verb of the small m1nd (mission next, mail
//	              send|inbox, the PostToolUse hook, the git hook) vs the
//	              hello-world, with page faults, and the package inits a
//	              call waits for (GODEBUG=inittrace=1);
//	post-many     the same post on a brain of 10k missions vs one of 10
//	              (packed refs);
//	heads         `m1nd mission heads --json` of 100k missions with the head
//	              cache vs `git for-each-ref | git cat-file --batch`: loose
//	              refs, packed refs, after git gc (goal: 0.5 s absolute);
//	heads-nocache heads of 10k after gc with the cache removed every run;
//	verify        `m1nd verify` of 10k after gc vs the same git pipe;
//	sync          first `m1nd sync` of 1k missions to a fresh bare remote vs
//	              `git push --atomic` of the same refs; a steady sync vs
//	              `git ls-remote`; a newcomer's first sync vs a hookless
//	              `git fetch`;
//	slow-hook     the first sync of 1k to a remote whose update hook costs
//	              50 ms per ref vs one `git push --atomic`: the longest
//	              silence on m1nd's stderr (goal: none over 30 s);
//	pack-refs     `git pack-refs --all` over 10k refs m1nd keeps packed, in a
//	              worktree m1nd guards vs hooks off (cut at -pack-timeout);
//	git           git's own commands where m1nd is installed (pack-refs of
//	              1,000 loose branches, branch -D of 200, a fetch of 1,000
//	              new refs, gc, commit, tag, rebase -i) vs hooks off;
//	serve         the real `m1nd serve`: the tray's heads view vs
//	              /api/system_blocks, 8 connections, req/s and p99;
//	regate        a landing whose target moved, real serve and runnerd: from
//	              main's move to `m1nd land`'s exit (runnerd re-gates the
//	              merge) vs the gate alone (goal: ≤ 150 ms beyond it);
//	store, mail   the brain store and the PostToolUse hook (no goal), and
//	              reading a 10k backlog as the hook says (goal: 2 s);
//	tray-idle     the CPU of a tray left open on the heads row's missions,
//	              one event stream, nothing moving (goal: under 1%).
//
// Fixtures are written by `git fast-import` (commits byte for byte what m1nd
// writes, checked against an in-process post) and copied between rows.
// Run it with `go run ./bench`; `-quick` runs every row on reduced sizes (for
// CI). It builds m1nd and m1nd-full itself unless -m1nd names the small one. Nothing here
// asserts a time: the summary says whether each goal was met, the exit
// status only whether the bench ran.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/m1nd/m1nd/chain"
)

// sizes is how big each row's fixture is and how long each row runs.
type sizes struct {
	posts, missions, many, syncMissions, refs, serveMissions, runs, blocks, letters int
	serve, packTimeout, idle                                                        time.Duration
}

func main() {
	full := sizes{posts: 200, missions: 100000, many: 10000, syncMissions: 1000, refs: 10000, serveMissions: 1000, runs: 9, blocks: 50, letters: 10000, serve: 10 * time.Second, packTimeout: 120 * time.Second, idle: 10 * time.Second}
	quick := sizes{posts: 30, missions: 2000, many: 200, syncMissions: 100, refs: 500, serveMissions: 1000, runs: 3, blocks: 10, letters: 500, serve: 2 * time.Second, packTimeout: 60 * time.Second, idle: 2 * time.Second}
	var sz sizes
	flag.IntVar(&sz.posts, "posts", full.posts, "letters appended per side in the post rows")
	flag.IntVar(&sz.missions, "missions", full.missions, "missions in the heads row (with the head cache)")
	flag.IntVar(&sz.many, "many", full.many, "missions in the post-many, heads-nocache and verify rows")
	flag.IntVar(&sz.syncMissions, "sync-missions", full.syncMissions, "missions in the sync row")
	flag.IntVar(&sz.refs, "refs", full.refs, "loose mission refs in the pack-refs row")
	flag.IntVar(&sz.serveMissions, "serve-missions", full.serveMissions, "missions in the serve row")
	flag.DurationVar(&sz.serve, "serve", full.serve, "load time per endpoint in the serve row")
	flag.DurationVar(&sz.idle, "idle", full.idle, "how long the tray-idle row watches an idle tray")
	flag.DurationVar(&sz.packTimeout, "pack-timeout", full.packTimeout, "cap on one hooked git pack-refs run")
	flag.IntVar(&sz.runs, "runs", full.runs, "timed runs per side in the rows of whole reads")
	flag.IntVar(&sz.blocks, "blocks", full.blocks, "top-level directories (so blocks) in the store row")
	flag.IntVar(&sz.letters, "letters", full.letters, "letters in the mailbox for the mail row")
	bin := flag.String("m1nd", "", "the small m1nd to measure, m1nd-full beside it (default: build both from ./cmd/...)")
	dir := flag.String("dir", "out", "folder for the scratch repositories (on the disk where repositories live; some sandboxes make /tmp slower)")
	keep := flag.Bool("keep", false, "keep the scratch repositories (their folder is printed) for a look afterwards")
	isQuick := flag.Bool("quick", false, "every row on reduced sizes and few runs (for CI); flags given explicitly still win")
	rowList := flag.String("rows", "", "comma list of rows to run (default all): "+strings.Join(rowNames, ","))
	flag.Parse()
	if *isQuick {
		set := map[string]bool{}
		flag.Visit(func(f *flag.Flag) { set[f.Name] = true })
		q := func(name string, dst *int, v int) {
			if !set[name] {
				*dst = v
			}
		}
		q("posts", &sz.posts, quick.posts)
		q("missions", &sz.missions, quick.missions)
		q("many", &sz.many, quick.many)
		q("sync-missions", &sz.syncMissions, quick.syncMissions)
		q("refs", &sz.refs, quick.refs)
		q("serve-missions", &sz.serveMissions, quick.serveMissions)
		q("runs", &sz.runs, quick.runs)
		q("blocks", &sz.blocks, quick.blocks)
		q("letters", &sz.letters, quick.letters)
		if !set["serve"] {
			sz.serve = quick.serve
		}
		if !set["pack-timeout"] {
			sz.packTimeout = quick.packTimeout
		}
		if !set["idle"] {
			sz.idle = quick.idle
		}
	}
	rows, err := parseRows(*rowList)
	if err == nil {
		err = run(sz, rows, *bin, *dir, *keep)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// rowNames are the rows in the order they run; -rows picks some.
var rowNames = []string{"post", "start", "post-many", "heads", "heads-nocache", "verify", "sync", "slow-hook", "pack-refs", "git", "serve", "regate", "store", "mail", "tray-idle"}

func parseRows(list string) (map[string]bool, error) {
	rows := map[string]bool{}
	if strings.TrimSpace(list) == "" {
		for _, r := range rowNames {
			rows[r] = true
		}
		return rows, nil
	}
	for _, r := range strings.Split(list, ",") {
		r = strings.TrimSpace(r)
		if !slices.Contains(rowNames, r) {
			return nil, fmt.Errorf("-rows: unknown row %q (rows: %s)", r, strings.Join(rowNames, ", "))
		}
		rows[r] = true
	}
	return rows, nil
}

func run(sz sizes, rows map[string]bool, bin, dir string, keep bool) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	work, err := os.MkdirTemp(dir, "m1nd-bench-")
	if err != nil {
		return err
	}
	if work, err = filepath.Abs(work); err != nil {
		return err
	}
	if !keep {
		defer os.RemoveAll(work)
	}
	if bin == "" {
		bin = filepath.Join(work, "m1nd")
		fmt.Fprintln(os.Stderr, "building m1nd and m1nd-full …")
		// Built as the README installs them, side by side.
		build := exec.Command("go", "build", "-tags", "urfave_cli_no_docs", "-o", work+string(filepath.Separator), "./cmd/...")
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := build.CombinedOutput(); err != nil {
			return fmt.Errorf("go build: %v\n%s", err, out)
		}
	} else if bin, err = filepath.Abs(bin); err != nil {
		return err
	}
	gitVersion, _ := exec.Command("git", "--version").Output()
	fmt.Printf("m1nd bench — %s, %s  scratch: %s\n", time.Now().UTC().Format(time.RFC3339), strings.TrimSpace(string(gitVersion)), work)
	fx := &fixtures{work: work, built: map[int]string{}}
	steps := []struct {
		row string
		fn  func() error
	}{
		{"post", func() error { return benchPost(work, bin, sz.posts) }},
		{"start", func() error { return benchStart(work, bin, max(sz.posts/2, 10)) }},
		{"post-many", func() error { return benchPostMany(fx, bin, sz.many, sz.posts) }},
		{"heads", func() error { return benchHeads(fx, bin, sz.missions, sz.runs) }},
		{"heads-nocache", func() error { return benchHeadsNoCache(fx, bin, sz.many, sz.runs) }},
		{"verify", func() error { return benchVerify(fx, bin, sz.many, sz.runs) }},
		{"sync", func() error { return benchSync(fx, bin, sz.syncMissions, sz.runs) }},
		{"slow-hook", func() error { return benchSlowHook(fx, bin, sz.syncMissions) }},
		{"pack-refs", func() error { return benchPackRefs(fx, bin, sz.refs, min(sz.runs, 3), sz.packTimeout) }},
		{"git", func() error { return benchGitCommands(work, bin, min(max(sz.refs/10, 200), 1000), max(sz.runs, 5)) }},
		{"serve", func() error { return benchServe(fx, bin, sz.serveMissions, sz.serve) }},
		{"regate", func() error { return benchRegate(work, bin, sz.runs) }},
		{"store", func() error { return benchStore(work, bin, sz.blocks, max(sz.posts/4, 3)) }},
		{"mail", func() error { return benchMail(work, bin, sz.letters, max(sz.runs, 15)) }},
		{"tray-idle", func() error { return benchTrayIdle(fx, bin, sz.missions, sz.idle) }},
	}
	start := time.Now()
	for _, st := range steps {
		if !rows[st.row] {
			continue
		}
		if err := st.fn(); err != nil {
			return fmt.Errorf("%s: %w", st.row, err)
		}
	}
	printSummary(time.Since(start))
	return nil
}

// summaryRow is one line of the table printed at the end.
type summaryRow struct{ row, m1nd, anchor, ratio, goal, meets string }

var summary []summaryRow

// addRatio records a row whose goal is m1nd/anchor ≤ goal (medians).
func addRatio(row string, m1nd, anchor time.Duration, goal float64) {
	r := float64(m1nd) / float64(anchor)
	summary = append(summary, summaryRow{row, ms(m1nd), ms(anchor), fmt.Sprintf("%.2f", r), fmt.Sprintf("ratio ≤ %.2f", goal), yesNo(r <= goal)})
}

// sideBySide prints a row's two sides and their ratio against goal, and
// records the row in the summary.
func sideBySide(m1ndLabel, anchorLabel string, m1nd, anchor []time.Duration, row string, goal float64) {
	printRow(m1ndLabel, m1nd)
	printRow(anchorLabel, anchor)
	fmt.Printf("    ratio m1nd/anchor (median): %.2fx (goal ≤ %.2f)\n", float64(median(m1nd))/float64(median(anchor)), goal)
	addRatio(row, median(m1nd), median(anchor), goal)
}

// addInfo records a row measured for the record, with no goal.
func addInfo(row string, m1nd, anchor time.Duration) {
	summary = append(summary, summaryRow{row, ms(m1nd), ms(anchor), fmt.Sprintf("%.2f", float64(m1nd)/float64(anchor)), "—", "—"})
}

func yesNo(ok bool) string {
	if ok {
		return "yes"
	}
	return "no"
}

func printSummary(took time.Duration) {
	fmt.Printf("\nsummary (medians; ratio = m1nd/anchor; a report, not a test) — %s\n", took.Round(time.Second))
	if len(fixtureTimes) > 0 {
		fmt.Printf("fixtures built: %s\n", strings.Join(fixtureTimes, ", "))
	}
	w := []int{3, 4, 6, 5, 4, 10}
	all := append([]summaryRow{{"row", "m1nd", "anchor", "ratio", "goal", "meets goal"}}, summary...)
	for _, r := range all {
		for i, c := range []string{r.row, r.m1nd, r.anchor, r.ratio, r.goal, r.meets} {
			w[i] = max(w[i], utf8.RuneCountInString(c))
		}
	}
	for _, r := range all {
		cells := []string{r.row, r.m1nd, r.anchor, r.ratio, r.goal, r.meets}
		line := ""
		for i, c := range cells {
			line += "  " + c + strings.Repeat(" ", w[i]-utf8.RuneCountInString(c))
		}
		fmt.Println(strings.TrimRight(line, " "))
	}
}

// newRepo makes a git repository named name under work.
func newRepo(work, name string) (string, error) {
	dir := filepath.Join(work, name)
	if out, err := exec.Command("git", "init", "-q", dir).CombinedOutput(); err != nil {
		return "", fmt.Errorf("git init: %v: %s", err, out)
	}
	return dir, nil
}

// letters builds a chain of n canonical letters on one mission.
func letters(brainName string, n int) [][]byte {
	base := time.Date(2026, 7, 9, 12, 0, 0, 0, time.UTC)
	l := &chain.Letter{
		Schema: chain.LetterSchema, MissionID: "msn_0123456789ab", MissionSeq: 1,
		BlockID: "sb_bench_core", BrainRef: brainName, Seat: "hand", Capability: "hand-runner",
		Phase: chain.PhaseJudging, StartedAt: chain.Timestamp(base), UpdatedAt: chain.Timestamp(base),
	}
	out := [][]byte{l.Canonical()}
	for i := 1; i < n; i++ {
		l = chain.Next(l, l.ID(), base.Add(time.Duration(i)*time.Second))
		l.Phase = chain.PhaseExecuting
		out = append(out, l.Canonical())
	}
	return out
}

func benchPost(work, bin string, n int) error {
	m1ndRepo, err := newRepo(work, "post-m1nd")
	if err != nil {
		return err
	}
	gitRepo, err := newRepo(work, "post-git")
	if err != nil {
		return err
	}
	chainLetters := letters("post-m1nd", n)
	files := make([]string, n)
	for i, body := range chainLetters {
		files[i] = filepath.Join(work, fmt.Sprintf("letter-%04d.json", i))
		if err := os.WriteFile(files[i], body, 0o644); err != nil {
			return err
		}
	}
	fmt.Fprintf(os.Stderr, "post: %d letters per side …\n", n)
	scriptRepo, err := newRepo(work, "post-script")
	if err != nil {
		return err
	}
	hello, err := buildHello(work)
	if err != nil {
		return err
	}
	var m1ndTimes, gitTimes, scriptTimes, helloTimes []time.Duration
	parent, scriptParent := "", ""
	for i := 0; i < n; i++ {
		start := time.Now()
		if out, err := exec.Command(hello).CombinedOutput(); err != nil {
			return fmt.Errorf("hello: %v: %s", err, out)
		}
		helloTimes = append(helloTimes, time.Since(start))

		start = time.Now()
		cmd := exec.Command(bin, "mission", "post", files[i])
		cmd.Dir = m1ndRepo
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("m1nd post %d: %v: %s", i, err, out)
		}
		m1ndTimes = append(m1ndTimes, time.Since(start))

		start = time.Now()
		next, err := gitAppend(gitRepo, files[i], parent, i+1)
		if err != nil {
			return err
		}
		gitTimes = append(gitTimes, time.Since(start))
		parent = next

		start = time.Now()
		next, err = scriptAppend(scriptRepo, files[i], scriptParent, i+1)
		if err != nil {
			return err
		}
		scriptTimes = append(scriptTimes, time.Since(start))
		scriptParent = next
	}
	fmt.Printf("\n(a) append one letter, whole process, %d letters on one chain\n", n)
	printRow("m1nd mission post", m1ndTimes)
	printRow("git plumbing as a bash script (the anchor)", scriptTimes)
	printRow("git plumbing, 4 processes exec'd directly", gitTimes)
	printRow("a static Go hello-world (one process's floor)", helloTimes)
	fmt.Printf("  m1nd is %.2fx faster than the script, %.2fx faster than the bare processes (medians)\n",
		float64(median(scriptTimes))/float64(median(m1ndTimes)), float64(median(gitTimes))/float64(median(m1ndTimes)))
	fmt.Printf("    ratio m1nd/script %.2f (goal ≤ 0.45), m1nd/hello %.2f (goal ≤ 2)\n",
		float64(median(m1ndTimes))/float64(median(scriptTimes)), float64(median(m1ndTimes))/float64(median(helloTimes)))
	addRatio("post vs script", median(m1ndTimes), median(scriptTimes), 0.45)
	addRatio("post vs hello", median(m1ndTimes), median(helloTimes), 2)
	return nil
}

// buildHello builds a static Go hello-world: the floor of one process per
// call, as the m1nd binary is built (no cgo).
func buildHello(work string) (string, error) {
	dir := filepath.Join(work, "hello")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	src := "package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"hello\") }\n"
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(src), 0o644); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module hello\n\ngo 1.22\n"), 0o644); err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "hello")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Dir = dir
	build.Env = append(os.Environ(), "CGO_ENABLED=0", "GOWORK=off")
	if out, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build hello: %v: %s", err, out)
	}
	return bin, nil
}

// gitAppend is the plumbing anchor: the four processes a shell script would
// run to append a letter commit to a ref with a compare-and-swap.
func gitAppend(repo, file, parent string, seq int) (string, error) {
	blob, err := gitOut(repo, nil, "hash-object", "-w", file)
	if err != nil {
		return "", err
	}
	tree, err := gitOut(repo, strings.NewReader("100644 blob "+blob+"\tletter.json\n"), "mktree")
	if err != nil {
		return "", err
	}
	args := []string{"commit-tree", tree, "-m", fmt.Sprintf("msn_0123456789ab #%d executing sb_bench_core", seq)}
	if parent != "" {
		args = append(args, "-p", parent)
	}
	commit, err := gitOut(repo, nil, args...)
	if err != nil {
		return "", err
	}
	old := parent
	if old == "" {
		old = strings.Repeat("0", 40)
	}
	_, err = gitOut(repo, nil, "update-ref", chain.MissionRefPrefix+"msn_0123456789ab", commit, old)
	return commit, err
}

// appendScript is how an operator appends a letter with git's plumbing
// from a shell: the anchor DESIGN §9 names.
const appendScript = `set -e
blob=$(git hash-object -w "$1")
tree=$(printf '100644 blob %s\tletter.json\n' "$blob" | git mktree)
if [ -n "$2" ]; then commit=$(git commit-tree "$tree" -p "$2" -m "$3"); old=$2
else commit=$(git commit-tree "$tree" -m "$3"); old=0000000000000000000000000000000000000000; fi
git update-ref refs/m1nd/missions/msn_0123456789ab "$commit" "$old"
echo "$commit"`

func scriptAppend(repo, file, parent string, seq int) (string, error) {
	cmd := exec.Command("bash", "-c", appendScript, "append", file, parent, fmt.Sprintf("msn_0123456789ab #%d executing sb_bench_core", seq))
	cmd.Dir = repo
	cmd.Env = gitEnv()
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("append script: %v", err)
	}
	return strings.TrimSpace(string(out)), nil
}

// gitEnv is the environment every git the bench starts runs with: this
// process's, and a fixed identity for the commits it writes.
func gitEnv() []string {
	return append(os.Environ(), "GIT_AUTHOR_NAME=bench", "GIT_AUTHOR_EMAIL=bench@m1nd", "GIT_COMMITTER_NAME=bench", "GIT_COMMITTER_EMAIL=bench@m1nd")
}

func gitOut(repo string, stdin io.Reader, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = repo
	cmd.Stdin = stdin
	cmd.Env = gitEnv()
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("git %s: %v", args[0], err)
	}
	return strings.TrimSpace(string(out)), nil
}

// gitHeads is the heads anchor: for-each-ref piped into cat-file --batch
// of every head's letter.json, as two processes connected by a pipe.
func gitHeads(repo string) (int, error) {
	list := exec.Command("git", "for-each-ref", "--format=%(objectname):letter.json", chain.MissionRefPrefix)
	list.Dir = repo
	cat := exec.Command("git", "cat-file", "--batch")
	cat.Dir = repo
	pipe, err := list.StdoutPipe()
	if err != nil {
		return 0, err
	}
	cat.Stdin = pipe
	var out bytes.Buffer
	cat.Stdout = &out
	if err := list.Start(); err != nil {
		return 0, err
	}
	if err := cat.Start(); err != nil {
		return 0, err
	}
	if err := list.Wait(); err != nil {
		return 0, fmt.Errorf("git for-each-ref: %v", err)
	}
	if err := cat.Wait(); err != nil {
		return 0, fmt.Errorf("git cat-file: %v", err)
	}
	return out.Len(), nil
}

func median(ds []time.Duration) time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

func percentile(ds []time.Duration, p float64) time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[int(float64(len(s)-1)*p)]
}

func printRow(name string, ds []time.Duration) {
	fmt.Printf("  %-48s median %8s   p90 %8s   (n=%d)\n", name, ms(median(ds)), ms(percentile(ds, 0.9)), len(ds))
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2fms", float64(d.Microseconds())/1000) }
