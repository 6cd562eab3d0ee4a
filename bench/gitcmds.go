package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// Git's own commands in a repository where m1nd is installed (issue 39):
// the human's checkout after `m1nd init`, where no agent writes and so no
// hook of m1nd's runs, beside the same command with hooks off
// (core.hooksPath=/dev/null), alternating on identical copies of one
// repository. Goal: within 1.2×.

// gitCmd is one row: what prepares a copy (untimed), and the command.
type gitCmd struct {
	name  string
	setup func(dir string) error
	args  []string
	env   []string
}

// gitScript runs a shell script in dir with hooks off: a row's untimed
// preparation.
func gitScript(dir, script string) error {
	cmd := exec.Command("sh", "-c", script)
	cmd.Dir = dir
	cmd.Env = gitEnv()
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%s: %v: %s", script, err, out)
	}
	return nil
}

// looseBranches is a script that writes n loose branches (hooks off).
func looseBranches(prefix string, n int) string {
	return fmt.Sprintf(`for i in $(seq 1 %d); do echo "create refs/heads/%s$i HEAD"; done | git -c core.hooksPath=/dev/null update-ref --stdin`, n, prefix)
}

func benchGitCommands(work, bin string, branches, runs int) error {
	base := filepath.Join(work, "gitcmds-base")
	upstream := filepath.Join(work, "gitcmds-upstream.git")
	if err := os.MkdirAll(base, 0o755); err != nil {
		return err
	}
	if err := gitScript(base, `git init -q && for i in $(seq 1 8); do echo $i > f$i && git add f$i && git commit -qm "c$i"; done`); err != nil {
		return err
	}
	if out, err := m1ndRun(bin, base, "init"); err != nil {
		return fmt.Errorf("m1nd init: %v: %s", err, out)
	}
	if err := gitScript(work, "git clone -q --bare gitcmds-base gitcmds-upstream.git && cd gitcmds-upstream.git && "+looseBranches("up", branches)); err != nil {
		return err
	}
	rows := []gitCmd{
		{name: fmt.Sprintf("pack-refs --all, %d loose branches", branches), setup: func(d string) error { return gitScript(d, looseBranches("b", branches)) }, args: []string{"pack-refs", "--all"}},
		{name: "branch -D of 200", setup: func(d string) error { return gitScript(d, looseBranches("d", 200)) },
			args: append([]string{"branch", "-q", "-D"}, numbered("d", 200)...)},
		{name: fmt.Sprintf("fetch of %d new refs", branches), setup: func(d string) error { return gitScript(d, "git remote add up "+upstream) },
			args: []string{"fetch", "-q", "--no-tags", "up", "+refs/heads/*:refs/remotes/up/*"}},
		{name: "gc", setup: func(d string) error { return gitScript(d, looseBranches("g", 50)) }, args: []string{"gc", "-q"}},
		{name: "commit", args: []string{"commit", "-q", "--allow-empty", "-m", "plain"}},
		{name: "tag", args: []string{"tag", "-a", "-m", "v", "v9"}},
		{name: "rebase -i of 5 commits", args: []string{"rebase", "-q", "-i", "--force-rebase", "HEAD~5"}, env: []string{"GIT_SEQUENCE_EDITOR=true"}},
	}
	fmt.Printf("\n(j) git's own commands where m1nd is installed (m1nd init: the human's checkout), beside hooks off, %d runs per side\n", runs)
	for _, row := range rows {
		var sides [2][]time.Duration
		pres := [2][]string{nil, {"-c", "core.hooksPath=/dev/null"}}
		for r := 0; r <= runs; r++ { // round 0 warms the page cache, and is not counted
			for _, i := range [][2]int{{0, 1}, {1, 0}}[r%2] { // each side first in turn
				d, err := timedGit(work, base, row, pres[i])
				if err != nil {
					return fmt.Errorf("%s: %w", row.name, err)
				}
				if r > 0 {
					sides[i] = append(sides[i], d)
				}
			}
		}
		fmt.Printf("  %s\n", row.name)
		sideBySide("m1nd installed", "hooks off (core.hooksPath=/dev/null)", sides[0], sides[1], "git "+row.name+", m1nd installed", 1.2)
	}
	return nil
}

// timedGit copies base, prepares the copy, and times row's command in it
// with pre before its arguments.
func timedGit(work, base string, row gitCmd, pre []string) (time.Duration, error) {
	dir, err := os.MkdirTemp(work, "gitcmd-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(dir)
	dir = filepath.Join(dir, "repo")
	if out, err := exec.Command("cp", "-a", base, dir).CombinedOutput(); err != nil {
		return 0, fmt.Errorf("cp -a: %v: %s", err, out)
	}
	if row.setup != nil {
		if err := row.setup(dir); err != nil {
			return 0, err
		}
	}
	cmd := exec.Command("git", append(append([]string(nil), pre...), row.args...)...)
	cmd.Dir = dir
	cmd.Env = append(gitEnv(), row.env...)
	start := time.Now()
	out, err := cmd.CombinedOutput()
	took := time.Since(start)
	if err != nil {
		return 0, fmt.Errorf("git %s: %v: %s", strings.Join(row.args, " "), err, out)
	}
	return took, nil
}

// numbered is prefix1 … prefixN.
func numbered(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s%d", prefix, i+1)
	}
	return out
}
