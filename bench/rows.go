package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/m1nd/m1nd/chain"
)

// take hands over the pristine fixture of n missions itself (built now if
// need be), for a row that is its last user: no copy.
func (f *fixtures) take(n int) (string, error) {
	if src, ok := f.built[n]; ok {
		delete(f.built, n)
		return src, nil
	}
	return buildFixture(f.work, n)
}

// gced returns a copy of the fixture of n missions after `git gc`, made
// once and shared by the rows that only read it.
func (f *fixtures) gced(n int) (string, error) {
	name := fmt.Sprintf("gc-%d", n)
	dir := filepath.Join(f.work, name)
	if _, err := os.Stat(dir); err == nil {
		return dir, nil
	}
	dir, err := f.copyOf(name, n)
	if err != nil {
		return "", err
	}
	_, err = gitOut(dir, nil, "gc", "-q")
	return dir, err
}

// m1ndRun runs m1nd in dir and returns its stdout.
func m1ndRun(bin, dir string, args ...string) ([]byte, error) {
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return out, fmt.Errorf("m1nd %v: %v: %s%s", args, err, out, stderr.Bytes())
	}
	return out, nil
}

// alternate runs the sides in turn, rounds times (plus a first round that
// only warms the page cache when warm is set), and returns each side's
// times.
func alternate(rounds int, warm bool, sides ...func() error) ([][]time.Duration, error) {
	times := make([][]time.Duration, len(sides))
	first := 0
	if warm {
		first = -1
	}
	for r := first; r < rounds; r++ {
		for i, side := range sides {
			start := time.Now()
			if err := side(); err != nil {
				return nil, err
			}
			if r >= 0 {
				times[i] = append(times[i], time.Since(start))
			}
		}
	}
	return times, nil
}

// headsSide is `m1nd mission heads --json` in dir, checked to list want
// missions.
func headsSide(bin, dir string, want int) func() error {
	return func() error {
		out, err := m1ndRun(bin, dir, "mission", "heads", "--json")
		if err != nil {
			return err
		}
		if got := bytes.Count(out, []byte(`"head_letter_id"`)); got != want {
			return fmt.Errorf("m1nd mission heads listed %d missions, want %d", got, want)
		}
		return nil
	}
}

func gitHeadsSide(dir string) func() error {
	return func() error { _, err := gitHeads(dir); return err }
}

// benchPostMany: one whole-process post on a brain of many missions with
// packed refs, beside the same post on a brain of 10.
func benchPostMany(fx *fixtures, bin string, many, posts int) error {
	manyDir, err := fx.copyOf("post-many", many)
	if err != nil {
		return err
	}
	fewDir, err := fx.copyOf("post-few", 10)
	if err != nil {
		return err
	}
	for _, d := range []string{manyDir, fewDir} {
		if _, err := gitOut(d, nil, "pack-refs", "--all"); err != nil {
			return err
		}
	}
	files := make([]string, posts)
	for i, body := range letters(benchBrain, posts) {
		files[i] = filepath.Join(fx.work, fmt.Sprintf("many-letter-%04d.json", i))
		if err := os.WriteFile(files[i], body, 0o644); err != nil {
			return err
		}
	}
	fmt.Fprintf(os.Stderr, "post-many: %d letters per side …\n", posts)
	i := 0
	post := func(dir string) func() error {
		return func() error { _, err := m1ndRun(bin, dir, "mission", "post", files[i]); return err }
	}
	var times [][]time.Duration
	for i = 0; i < posts; i++ {
		t, err := alternate(1, false, post(manyDir), post(fewDir))
		if err != nil {
			return err
		}
		if times == nil {
			times = t
		} else {
			times[0], times[1] = append(times[0], t[0]...), append(times[1], t[1]...)
		}
	}
	fmt.Printf("\n(e) m1nd mission post, packed refs, %d letters on one chain\n", posts)
	sideBySide(fmt.Sprintf("on a brain of %d missions", many), "on a brain of 10 missions (the anchor)", times[0], times[1],
		fmt.Sprintf("post, %d missions vs 10", many), 1.05)
	return nil
}

// benchHeads: heads of n missions with the head cache (warmed by the first
// run), loose refs, then packed refs, then after git gc, beside the git
// pipe. The goal is absolute: 0.5 s in every state.
func benchHeads(fx *fixtures, bin string, n, runs int) error {
	dir, err := fx.take(n)
	if err != nil {
		return err
	}
	fmt.Printf("\n(b) read every mission head with the head cache, %d missions, %d runs per side\n", n, runs)
	for _, st := range []struct {
		name, short string
		setup       []string
	}{
		{"loose refs (objects in fast-import's pack)", "loose", nil},
		{"packed refs (git pack-refs --all)", "packed", []string{"pack-refs", "--all"}},
		{"after git gc", "gc", []string{"gc", "-q"}},
	} {
		if st.setup != nil {
			if _, err := gitOut(dir, nil, st.setup...); err != nil {
				return err
			}
		}
		fmt.Fprintf(os.Stderr, "heads: %s …\n", st.short)
		t, err := alternate(runs, true, headsSide(bin, dir, n), gitHeadsSide(dir))
		if err != nil {
			return err
		}
		fmt.Printf("  %s:\n", st.name)
		printRow("  m1nd mission heads --json", t[0])
		printRow("  git for-each-ref | git cat-file --batch", t[1])
		m, g := median(t[0]), median(t[1])
		fmt.Printf("    ratio m1nd/git (median): %.2fx\n", float64(m)/float64(g))
		summary = append(summary, summaryRow{fmt.Sprintf("heads %d, cache, %s", n, st.short), ms(m), ms(g),
			fmt.Sprintf("%.2f", float64(m)/float64(g)), "≤ 0.5 s", yesNo(m <= 500*time.Millisecond)})
	}
	return nil
}

// benchHeadsNoCache: heads of n missions after git gc with no head cache
// and no kept listing (both removed before every m1nd run).
func benchHeadsNoCache(fx *fixtures, bin string, n, runs int) error {
	dir, err := fx.gced(n)
	if err != nil {
		return err
	}
	runtime := filepath.Join(dir, ".git", "m1nd")
	heads := headsSide(bin, dir, n)
	cold := func() error {
		for _, cache := range []string{chain.HeadCachePath(runtime), chain.MissionListPath(runtime)} {
			if err := os.Remove(cache); err != nil && !errors.Is(err, os.ErrNotExist) {
				return err
			}
		}
		return heads()
	}
	fmt.Fprintf(os.Stderr, "heads-nocache: %d missions …\n", n)
	t, err := alternate(runs, true, cold, gitHeadsSide(dir))
	if err != nil {
		return err
	}
	fmt.Printf("\n(b') read every mission head after git gc, no head cache, %d missions, %d runs per side\n", n, runs)
	sideBySide("m1nd mission heads --json (cache removed)", "git for-each-ref | git cat-file --batch", t[0], t[1],
		fmt.Sprintf("heads %d, gc, no cache", n), 1.0)
	return nil
}

// benchVerify: `m1nd verify` over n missions after git gc, beside the git
// pipe that reads every head letter.
func benchVerify(fx *fixtures, bin string, n, runs int) error {
	dir, err := fx.gced(n)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "verify: %d missions …\n", n)
	verify := func() error { _, err := m1ndRun(bin, dir, "verify"); return err }
	t, err := alternate(runs, true, verify, gitHeadsSide(dir))
	if err != nil {
		return err
	}
	fmt.Printf("\n(f) m1nd verify after git gc, %d missions, %d runs per side\n", n, runs)
	sideBySide("m1nd verify", "git for-each-ref | git cat-file --batch", t[0], t[1], fmt.Sprintf("verify %d, gc", n), 1.5)
	return nil
}

// benchSync: the first `m1nd sync` of n missions into a fresh bare remote,
// beside one `git push --atomic` of the same refs into another; a fresh
// pair of remotes every run.
func benchSync(fx *fixtures, bin string, n, runs int) error {
	dir, err := fx.copyOf("sync", n)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "sync: %d missions, %d runs …\n", n, runs)
	var mRemote, gRemote string
	r := 0
	m1ndSync := func() error {
		_, err := m1ndRun(bin, dir, "sync", fmt.Sprintf("m%d", r))
		return err
	}
	gitPush := func() error {
		_, err := gitOut(dir, nil, "push", "-q", "--atomic", gRemote, chain.MissionRefPrefix+"*:"+chain.MissionRefPrefix+"*")
		return err
	}
	var times [][]time.Duration
	for r = 0; r < runs; r++ {
		mRemote = filepath.Join(fx.work, fmt.Sprintf("sync-remote-m%d.git", r))
		gRemote = filepath.Join(fx.work, fmt.Sprintf("sync-remote-g%d.git", r))
		for _, remote := range []string{mRemote, gRemote} {
			if out, err := exec.Command("git", "init", "-q", "--bare", remote).CombinedOutput(); err != nil {
				return fmt.Errorf("git init --bare: %v: %s", err, out)
			}
		}
		if _, err := gitOut(dir, nil, "remote", "add", fmt.Sprintf("m%d", r), mRemote); err != nil {
			return err
		}
		t, err := alternate(1, false, m1ndSync, gitPush)
		if err != nil {
			return err
		}
		if times == nil {
			times = t
		} else {
			times[0], times[1] = append(times[0], t[0]...), append(times[1], t[1]...)
		}
		for _, remote := range []string{mRemote, gRemote} {
			got, err := gitOut(remote, nil, "for-each-ref", "--count", fmt.Sprint(n+1), "--format=x", chain.MissionRefPrefix)
			if err != nil {
				return err
			}
			if c := len(bytes.Fields([]byte(got))); c != n {
				return fmt.Errorf("%s holds %d missions after the push, want %d", remote, c, n)
			}
		}
	}
	fmt.Printf("\n(g) first sync of %d missions to a fresh bare file remote, %d runs per side\n", n, runs)
	sideBySide("m1nd sync", "git push --atomic, one glob refspec", times[0], times[1], fmt.Sprintf("sync %d, first", n), 1.3)
	return benchSyncReaders(fx, bin, dir, mRemote, fmt.Sprintf("m%d", runs-1), n, runs)
}

// benchSyncReaders: a steady sync (nothing new on either side) beside
// `git ls-remote` of the same refs; and a newcomer's first sync — a fresh
// clone of the remote with m1nd's hook installed (m1nd init) — beside a
// hookless `git fetch` of the same refs into another fresh clone.
func benchSyncReaders(fx *fixtures, bin, dir, remote, remoteName string, n, runs int) error {
	steady, err := alternate(runs, true,
		func() error { _, err := m1ndRun(bin, dir, "sync", remoteName); return err },
		func() error { _, err := gitOut(dir, nil, "ls-remote", "--refs", remote, chain.RefRoot+"*"); return err })
	if err != nil {
		return err
	}
	fmt.Printf("\n(h) steady sync of %d missions, nothing new on either side, %d runs per side\n", n, runs)
	sideBySide("m1nd sync", "git ls-remote refs/m1nd/*", steady[0], steady[1], fmt.Sprintf("sync %d, steady", n), 2.0)

	var mClone, gClone string
	var first [][]time.Duration
	for r := 0; r < runs; r++ {
		mClone = filepath.Join(fx.work, fmt.Sprintf("newcomer-m%d", r))
		gClone = filepath.Join(fx.work, fmt.Sprintf("newcomer-g%d", r))
		for _, c := range []string{mClone, gClone} {
			if out, err := exec.Command("git", "clone", "-q", remote, c).CombinedOutput(); err != nil {
				return fmt.Errorf("git clone: %v: %s", err, out)
			}
		}
		if _, err := m1ndRun(bin, mClone, "init"); err != nil {
			return err
		}
		t, err := alternate(1, false,
			func() error { _, err := m1ndRun(bin, mClone, "sync"); return err },
			func() error {
				_, err := gitOut(gClone, nil, "fetch", "-q", "--no-tags", "origin", "+refs/m1nd/*:refs/m1nd/*")
				return err
			})
		if err != nil {
			return err
		}
		if first == nil {
			first = t
		} else {
			first[0], first[1] = append(first[0], t[0]...), append(first[1], t[1]...)
		}
		for _, c := range []string{mClone, gClone} {
			got, err := gitOut(c, nil, "for-each-ref", "--count", fmt.Sprint(n+1), "--format=x", chain.MissionRefPrefix)
			if err != nil {
				return err
			}
			if k := len(bytes.Fields([]byte(got))); k != n {
				return fmt.Errorf("%s holds %d missions after its first sync, want %d", c, k, n)
			}
		}
	}
	fmt.Printf("\n(i) a newcomer's first sync of %d missions (m1nd's hook installed) beside a hookless git fetch, %d runs per side\n", n, runs)
	sideBySide("m1nd sync", "git fetch, no hook", first[0], first[1], fmt.Sprintf("sync %d, newcomer", n), 1.5)
	return nil
}

// benchPackRefs: `git pack-refs --all` over n mission refs written loose
// (by fast-import), then one m1nd post, which keeps m1nd's refs packed
// (gitstore.KeepPacked), with m1nd installed (m1nd init: the human's
// checkout, goal ≤ 2×) and in a worktree m1nd guards (m1nd hooks install:
// the guard runs for every transaction; reported, no goal: git starts it
// twice for every loose ref), beside the same on an identical copy with
// hooks off. A guarded run is cut at timeout.
func benchPackRefs(fx *fixtures, bin string, n, runs int, timeout time.Duration) error {
	base, err := fx.copyOf("packrefs-base", n)
	if err != nil {
		return err
	}
	if _, err := m1ndRun(bin, base, "init"); err != nil {
		return err
	}
	letter := filepath.Join(fx.work, "packrefs-letter.json")
	if err := os.WriteFile(letter, letters(benchBrain, 1)[0], 0o644); err != nil {
		return err
	}
	start := time.Now()
	if out, err := m1ndRun(bin, base, "mission", "post", letter); err != nil {
		return fmt.Errorf("mission post: %v: %s", err, out)
	}
	loose, err := gitOut(base, nil, "for-each-ref", "--format=%(refname)", chain.RefRoot)
	if err != nil {
		return err
	}
	left := 0
	for _, name := range strings.Fields(loose) {
		if _, err := os.Stat(filepath.Join(base, ".git", filepath.FromSlash(name))); err == nil {
			left++
		}
	}
	fmt.Fprintf(os.Stderr, "pack-refs: %d refs written loose, one post (%s) left %d loose; %d runs …\n", n, ms(time.Since(start)), left, runs)
	var hooked, installed, plain []time.Duration
	timedOut := false
	for r := 0; r < runs && !timedOut; r++ {
		var dirs [3]string
		for i, side := range []string{"hooked", "plain", "installed"} {
			dirs[i] = filepath.Join(fx.work, fmt.Sprintf("packrefs-%s-%d", side, r))
			if out, err := exec.Command("cp", "-a", base, dirs[i]).CombinedOutput(); err != nil {
				return fmt.Errorf("cp -a: %v: %s", err, out)
			}
		}
		if out, err := m1ndRun(bin, dirs[0], "hooks", "install"); err != nil {
			return fmt.Errorf("hooks install: %v: %s", err, out)
		}
		if hp, err := gitOut(dirs[0], nil, "config", "core.hooksPath"); err != nil || !strings.HasSuffix(hp, "/m1nd/hooks") {
			return fmt.Errorf("m1nd hooks install guarded nothing (core.hooksPath %q): %v", hp, err)
		}
		start := time.Now()
		if err := packRefs(dirs[2], 0, nil); err != nil {
			return err
		}
		installed = append(installed, time.Since(start))
		start = time.Now()
		err := packRefs(dirs[0], timeout, nil)
		if errors.Is(err, context.DeadlineExceeded) {
			timedOut = true
		} else if err != nil {
			return err
		} else {
			hooked = append(hooked, time.Since(start))
		}
		start = time.Now()
		if err := packRefs(dirs[1], 0, []string{"-c", "core.hooksPath=/dev/null"}); err != nil {
			return err
		}
		plain = append(plain, time.Since(start))
		for _, d := range dirs {
			os.RemoveAll(d)
		}
	}
	fmt.Printf("\n(h) git pack-refs --all over %d mission refs, as m1nd keeps them (packed as it writes)\n", n)
	printRow("m1nd installed (m1nd init)", installed)
	if timedOut {
		fmt.Printf("  %-48s > timeout (%s)\n", "a guarded worktree (m1nd hooks install)", timeout)
	} else if len(hooked) > 0 {
		printRow("a guarded worktree (m1nd hooks install)", hooked)
	}
	printRow("hooks off (core.hooksPath=/dev/null)", plain)
	fmt.Printf("    ratio installed/plain (median): %.2fx (goal ≤ 2)\n", float64(median(installed))/float64(median(plain)))
	if len(hooked) > 0 {
		fmt.Printf("    ratio guarded/plain (median): %.2fx (no goal: git starts the guard twice per loose ref)\n", float64(median(hooked))/float64(median(plain)))
	}
	addRatio(fmt.Sprintf("pack-refs %d, m1nd installed", n), median(installed), median(plain), 2)
	return nil
}

// packRefs runs git pack-refs --all in dir, killing git and whatever its
// hooks started when timeout (if any) runs out: then the error is
// context.DeadlineExceeded.
func packRefs(dir string, timeout time.Duration, pre []string) error {
	ctx := context.Background()
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	cmd := exec.CommandContext(ctx, "git", append(pre, "pack-refs", "--all")...)
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		return context.DeadlineExceeded
	}
	if err != nil {
		return fmt.Errorf("git pack-refs: %v: %s", err, out)
	}
	return nil
}

// slowHookPerRef is what the remote's update hook costs per ref in the
// slow-hook row: Gitea runs its hook once per pushed ref (~0.11 s each),
// gitolite too (~0.05 s).
const slowHookPerRef = 50 * time.Millisecond

// benchSlowHook: the first sync of n missions to a bare remote whose
// update hook sleeps slowHookPerRef per ref, beside one git push --atomic
// of the same refs to another such remote. What it measures is not speed
// (both pay the hook) but silence: the longest stretch m1nd's stderr says
// nothing, against git's one request, which a proxy with a 30 s timeout
// (nginx's proxy_read_timeout default is 60 s, often set to 30 s) cuts.
func benchSlowHook(fx *fixtures, bin string, n int) error {
	dir, err := fx.copyOf("slow-hook", n)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "slow-hook: %d missions, %s per ref on the remote …\n", n, slowHookPerRef)
	hook := fmt.Sprintf("#!/bin/sh\nsleep %.3f\n", slowHookPerRef.Seconds())
	var remotes []string
	for _, side := range []string{"m", "g"} {
		remote := filepath.Join(fx.work, "slow-hook-"+side+".git")
		if out, err := exec.Command("git", "init", "-q", "--bare", remote).CombinedOutput(); err != nil {
			return fmt.Errorf("git init --bare: %v: %s", err, out)
		}
		if err := os.WriteFile(filepath.Join(remote, "hooks", "update"), []byte(hook), 0o755); err != nil {
			return err
		}
		remotes = append(remotes, remote)
	}
	if _, err := gitOut(dir, nil, "remote", "add", "slow", remotes[0]); err != nil {
		return err
	}
	// m1nd: its stderr read line by line, the longest gap between lines
	// (and before the first and after the last) kept.
	cmd := exec.Command(bin, "sync", "slow")
	cmd.Dir = dir
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return err
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return err
	}
	var silence time.Duration
	var lines int
	last := start
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		now := time.Now()
		silence = max(silence, now.Sub(last))
		last = now
		lines++
	}
	if err := cmd.Wait(); err != nil {
		return fmt.Errorf("m1nd sync to a slow remote: %v", err)
	}
	took := time.Since(start)
	silence = max(silence, time.Since(last))
	gStart := time.Now()
	if _, err := gitOut(dir, nil, "push", "-q", "--atomic", remotes[1], chain.MissionRefPrefix+"*:"+chain.MissionRefPrefix+"*"); err != nil {
		return err
	}
	gTook := time.Since(gStart)
	for _, remote := range remotes {
		got, err := gitOut(remote, nil, "for-each-ref", "--count", fmt.Sprint(n+1), "--format=x", chain.MissionRefPrefix)
		if err != nil {
			return err
		}
		if c := len(bytes.Fields([]byte(got))); c != n {
			return fmt.Errorf("%s holds %d missions after the push, want %d", remote, c, n)
		}
	}
	fmt.Printf("\n(j) a first push of %d missions to a remote whose update hook costs %s per ref, one run per side\n", n, slowHookPerRef)
	fmt.Printf("  m1nd sync                                        took %8s   longest silence on stderr %8s   (%d progress lines)\n", ms(took), ms(silence), lines)
	fmt.Printf("  git push --atomic, one glob refspec              took %8s   one silent request\n", ms(gTook))
	fmt.Printf("    goal: no silence over 30 s; git's single request is %s\n", ms(gTook))
	summary = append(summary, summaryRow{fmt.Sprintf("sync %d, slow hook: silence", n), ms(silence), ms(gTook),
		fmt.Sprintf("%.2f", float64(silence)/float64(gTook)), "silence ≤ 30 s", yesNo(silence <= 30*time.Second)})
	addInfo(fmt.Sprintf("sync %d, slow hook: total", n), took, gTook)
	return nil
}
