package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/m1nd/m1nd/chain"
)

// hotVerb is one verb an agent's host or git runs per event, as the start
// row runs it.
type hotVerb struct {
	name  string
	args  []string
	stdin func(repo string) string // nil: nothing on stdin
}

// hotVerbs are the small m1nd's own verbs (mission post has its own row).
var hotVerbs = []hotVerb{
	{name: "mission next", args: []string{"mission", "next", "msn_0123456789ab"}},
	{name: "mail send", args: []string{"mail", "send", "--agent", "a1", "--to", "b1", "--what", "ping"}},
	{name: "mail inbox", args: []string{"mail", "inbox", "--agent", "a1"}},
	{name: "hook claude PostToolUse", args: []string{"hook", "claude", "PostToolUse", "--agent", "a1"},
		stdin: func(repo string) string {
			return `{"session_id":"bench-1","hook_event_name":"PostToolUse","cwd":"` + repo + `","tool_name":"Bash"}`
		}},
	{name: "hooks run reference-transaction", args: []string{"hooks", "run", "reference-transaction", "prepared"},
		stdin: func(repo string) string {
			head, _ := gitOut(repo, nil, "rev-parse", chain.RefRoot+"mail/b1/a1")
			return head + " " + head + " refs/m1nd/mail/b1/a1\n"
		}},
}

// process is one timed run of a process: its wall time and the minor page
// faults it took (what starting a larger binary costs besides the CPU).
type process struct {
	wall   time.Duration
	faults int64
}

// runProcess runs bin with args in dir, stdin on its standard input.
func runProcess(bin, dir, stdin string, env []string, args ...string) (process, []byte, error) {
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	p := process{wall: time.Since(start)}
	if cmd.ProcessState != nil {
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			p.faults = ru.Minflt
		}
	}
	if err != nil {
		return p, stderr.Bytes(), fmt.Errorf("%s %v: %v: %s%s", bin, args, err, stdout.Bytes(), stderr.Bytes())
	}
	return p, stderr.Bytes(), nil
}

// benchStart times each hot verb's whole process against a static Go
// hello-world, alternating, and reports its page faults and, from
// GODEBUG=inittrace=1, the packages whose initialisation it waits for.
func benchStart(work, bin string, runs int) error {
	repo, err := newRepo(work, "start-m1nd")
	if err != nil {
		return err
	}
	letter := filepath.Join(work, "start-letter.json")
	if err := os.WriteFile(letter, letters("start-m1nd", 1)[0], 0o644); err != nil {
		return err
	}
	if _, err := m1ndRun(bin, repo, "mission", "post", letter); err != nil {
		return err
	}
	if _, err := m1ndRun(bin, repo, "mail", "send", "--agent", "a1", "--to", "b1", "--what", "first"); err != nil {
		return err
	}
	hello, err := buildHello(work)
	if err != nil {
		return err
	}
	fmt.Printf("\n(s) a hot verb's whole process, %d runs each, against a static hello-world (the floor)\n", runs)
	for _, v := range hotVerbs {
		var m1nd, floor []process
		for i := 0; i < runs; i++ {
			h, _, err := runProcess(hello, repo, "", nil)
			if err != nil {
				return err
			}
			stdin := ""
			if v.stdin != nil {
				stdin = v.stdin(repo)
			}
			p, _, err := runProcess(bin, repo, stdin, nil, v.args...)
			if err != nil {
				return err
			}
			floor, m1nd = append(floor, h), append(m1nd, p)
		}
		mw, hw := medianWall(m1nd), medianWall(floor)
		fmt.Printf("  %-34s median %8s  hello %8s  ratio %.2f (goal ≤ 2)  page faults %d (hello %d)\n",
			v.name, ms(mw), ms(hw), float64(mw)/float64(hw), medianFaults(m1nd), medianFaults(floor))
		addRatio(v.name+" vs hello", mw, hw, 2)
	}
	return initReport(bin, hello, repo, runs)
}

// initReport runs mission next and hello under GODEBUG=inittrace=1 and
// prints the packages whose init took longest (mean over runs): what a
// call of the small m1nd waits for before its main starts.
func initReport(bin, hello, repo string, runs int) error {
	trace := []string{"GODEBUG=inittrace=1"}
	mean := func(bin string, args ...string) (map[string]float64, float64, error) {
		sum := map[string]float64{}
		for i := 0; i < runs; i++ {
			_, stderr, err := runProcess(bin, repo, "", trace, args...)
			if err != nil {
				return nil, 0, err
			}
			for pkg, msec := range parseInitTrace(stderr) {
				sum[pkg] += msec / float64(runs)
			}
		}
		total := 0.0
		for _, msec := range sum {
			total += msec
		}
		return sum, total, nil
	}
	pkgs, total, err := mean(bin, "mission", "next", "msn_0123456789ab")
	if err != nil {
		return err
	}
	_, helloTotal, err := mean(hello)
	if err != nil {
		return err
	}
	names := make([]string, 0, len(pkgs))
	for p := range pkgs {
		names = append(names, p)
	}
	sort.Slice(names, func(i, j int) bool { return pkgs[names[i]] > pkgs[names[j]] })
	fmt.Printf("  package init (GODEBUG=inittrace=1, mission next, mean of %d): %.2f ms in %d packages (hello %.2f ms); the longest:\n", runs, total, len(pkgs), helloTotal)
	for _, p := range names[:min(10, len(names))] {
		fmt.Printf("    %6.3f ms  %s\n", pkgs[p], p)
	}
	return nil
}

// parseInitTrace reads GODEBUG=inittrace=1 output, a line per package:
// "init PKG @T ms, D ms clock, B bytes, A allocs".
func parseInitTrace(stderr []byte) map[string]float64 {
	out := map[string]float64{}
	sc := bufio.NewScanner(bytes.NewReader(stderr))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 7 || f[0] != "init" || f[5] != "ms" || f[6] != "clock," {
			continue
		}
		if d, err := strconv.ParseFloat(f[4], 64); err == nil {
			out[f[1]] += d
		}
	}
	return out
}

func medianWall(ps []process) time.Duration {
	ds := make([]time.Duration, len(ps))
	for i, p := range ps {
		ds[i] = p.wall
	}
	return median(ds)
}

func medianFaults(ps []process) int64 {
	fs := make([]int64, len(ps))
	for i, p := range ps {
		fs[i] = p.faults
	}
	sort.Slice(fs, func(i, j int) bool { return fs[i] < fs[j] })
	return fs[len(fs)/2]
}
