// Command bench runs m1nd and its anchors side by side in one run and prints
// medians and ratios (DESIGN §9):
//
//	(a) whole-process `m1nd mission post` vs git's plumbing sequence
//	    (hash-object, mktree, commit-tree, update-ref) appending the same letters;
//	(b) `m1nd mission heads --json` over many missions vs
//	    `git for-each-ref | git cat-file --batch` of the head letters,
//	    with loose refs, then packed refs, then packed objects (git gc);
//	(c) the brain store: one store write (`m1nd skeleton edit`, a rename) vs
//	    the same snapshot written with git's plumbing as a bash script; a
//	    whole-store read (`m1nd blocks --json`) vs `git ls-tree -r | git
//	    cat-file --batch`; and `m1nd mission post` on a brain with a store;
//	(d) the PostToolUse hook on a mailbox of many letters, nothing new and
//	    one new letter, beside `git for-each-ref` over the same refs.
//
// Run it with `go run ./bench` (flags: -posts, -missions, -runs). It builds
// m1nd itself unless -m1nd names a binary. Nothing here asserts a time.
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/m1nd/m1nd/chain"
	"github.com/m1nd/m1nd/gitstore"
)

func main() {
	posts := flag.Int("posts", 200, "letters appended per side in the post benchmark")
	missions := flag.Int("missions", 10000, "missions in the heads benchmark")
	runs := flag.Int("runs", 9, "timed runs per side in the heads benchmark")
	bin := flag.String("m1nd", "", "m1nd binary to measure (default: build ./cmd/m1nd)")
	dir := flag.String("dir", "out", "folder for the scratch repositories (on the disk where repositories live; some sandboxes make /tmp slower)")
	blocks := flag.Int("blocks", 50, "top-level directories (so blocks) in the store benchmark")
	letters := flag.Int("letters", 10000, "letters in the mailbox for the hook benchmark")
	flag.Parse()
	if err := run(*posts, *missions, *runs, *blocks, *letters, *bin, *dir); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func run(posts, missions, runs, blocks, letters int, bin, dir string) error {
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
	defer os.RemoveAll(work)
	if bin == "" {
		bin = filepath.Join(work, "m1nd")
		fmt.Fprintln(os.Stderr, "building m1nd …")
		// Built as the README installs it.
		if out, err := exec.Command("go", "build", "-tags", "urfave_cli_no_docs", "-o", bin, "./cmd/m1nd").CombinedOutput(); err != nil {
			return fmt.Errorf("go build: %v\n%s", err, out)
		}
	}
	gitVersion, _ := exec.Command("git", "--version").Output()
	fmt.Printf("m1nd bench — %s, %s  scratch: %s\n", time.Now().UTC().Format(time.RFC3339), strings.TrimSpace(string(gitVersion)), work)
	if err := benchPost(work, bin, posts); err != nil {
		return err
	}
	if err := benchHeads(work, bin, missions, runs); err != nil {
		return err
	}
	if err := benchStore(work, bin, blocks, posts/4); err != nil {
		return err
	}
	return benchMail(work, bin, letters, max(runs, 15))
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
	var m1ndTimes, gitTimes, scriptTimes []time.Duration
	parent, scriptParent := "", ""
	for i := 0; i < n; i++ {
		start := time.Now()
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
	fmt.Printf("  m1nd is %.2fx faster than the script, %.2fx faster than the bare processes (medians)\n",
		float64(median(scriptTimes))/float64(median(m1ndTimes)), float64(median(gitTimes))/float64(median(m1ndTimes)))
	return nil
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
	_, err = gitOut(repo, nil, "update-ref", "refs/m1nd/missions/msn_0123456789ab", commit, old)
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
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=bench", "GIT_AUTHOR_EMAIL=bench@m1nd", "GIT_COMMITTER_NAME=bench", "GIT_COMMITTER_EMAIL=bench@m1nd")
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("append script: %v", err)
	}
	return strings.TrimSpace(string(out)), nil
}

func gitOut(repo string, stdin io.Reader, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = repo
	cmd.Stdin = stdin
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=bench", "GIT_AUTHOR_EMAIL=bench@m1nd", "GIT_COMMITTER_NAME=bench", "GIT_COMMITTER_EMAIL=bench@m1nd")
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("git %s: %v", args[0], err)
	}
	return strings.TrimSpace(string(out)), nil
}

func benchHeads(work, bin string, n, runs int) error {
	repoDir, err := newRepo(work, "heads")
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "heads: writing %d missions …\n", n)
	repo, err := gitstore.Open(repoDir)
	if err != nil {
		return err
	}
	m := &chain.Missions{Repo: repo, Brain: "heads"}
	for i := 0; i < n; i++ {
		if _, err := m.New(context.Background(), chain.NewMission{BlockID: "sb_heads_core", Agent: "bench", Now: time.Now()}); err != nil {
			return fmt.Errorf("write mission %d: %w", i, err)
		}
	}
	stages := []struct {
		name  string
		setup []string
		cold  bool // remove m1nd's head cache before every m1nd run
	}{
		{"loose refs, loose objects", nil, false},
		{"loose refs, loose objects, no head cache", nil, true},
		{"packed refs, loose objects", []string{"pack-refs", "--all"}, false},
		{"packed refs, packed objects", []string{"gc", "-q"}, false},
		{"packed refs, packed objects, no head cache", nil, true},
	}
	cacheFile := chain.HeadCachePath(filepath.Join(repoDir, ".git", "m1nd"))
	fmt.Printf("\n(b) read every mission head, %d missions, %d runs per side\n", n, runs)
	for _, st := range stages {
		if st.setup != nil {
			if _, err := gitOut(repoDir, nil, st.setup...); err != nil {
				return err
			}
		}
		var m1ndTimes, gitTimes []time.Duration
		var m1ndBytes, gitBytes int
		for r := 0; r < runs+1; r++ { // the first run of each side warms the page cache
			if st.cold {
				os.Remove(cacheFile)
			}
			start := time.Now()
			cmd := exec.Command(bin, "mission", "heads", "--json")
			cmd.Dir = repoDir
			out, err := cmd.Output()
			if err != nil {
				return fmt.Errorf("m1nd heads: %v", err)
			}
			if r > 0 {
				m1ndTimes = append(m1ndTimes, time.Since(start))
			}
			m1ndBytes = len(out)

			start = time.Now()
			gitOutBytes, err := gitHeads(repoDir)
			if err != nil {
				return err
			}
			if r > 0 {
				gitTimes = append(gitTimes, time.Since(start))
			}
			gitBytes = gitOutBytes
		}
		fmt.Printf("  %s:\n", st.name)
		printRow("  m1nd mission heads --json", m1ndTimes)
		printRow("  git for-each-ref | git cat-file --batch", gitTimes)
		fmt.Printf("    ratio m1nd/git (median): %.2fx   (output %d vs %d bytes)\n", float64(median(m1ndTimes))/float64(median(gitTimes)), m1ndBytes, gitBytes)
	}
	return nil
}

// gitHeads is the heads anchor: for-each-ref piped into cat-file --batch
// of every head's letter.json, as two processes connected by a pipe.
func gitHeads(repo string) (int, error) {
	list := exec.Command("git", "for-each-ref", "--format=%(objectname):letter.json", "refs/m1nd/missions/")
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
