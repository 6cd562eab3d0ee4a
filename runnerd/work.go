package runnerd

import (
	"context"
	"fmt"
	"strings"

	"github.com/m1nd/m1nd/chain"
	"github.com/m1nd/m1nd/gitstore"
	"github.com/m1nd/m1nd/ops"
	"github.com/m1nd/m1nd/runners"
)

// The gate binds a commit (DESIGN §10): runnerd gates committed work only,
// on a clean worktree, and the receipt candidate names the commit and tree
// the gate ran on. An agent that leaves changes uncommitted has them
// committed here, under the agent's own name and saying so, rather than
// the run failing: the agent finished its work, and what the gate tests
// must be exactly what lands — a commit. An agent that committed nothing
// has no work to gate, and its mission fails.

// uncommittedMessage is the subject of the commit runnerd makes of an
// agent's uncommitted work.
const uncommittedMessage = "m1nd: the work the agent left uncommitted"

// settled is the work a gate tests: the commit at the branch's tip, and
// its tree.
type settled struct {
	commit, tree string
	committed    bool // runnerd committed what the agent left
}

// settleWork makes the agent's work one commit on the mission's branch,
// or says why there is none: the worktree is on m1nd/<id>, what is left
// uncommitted (tracked or untracked, .gitignore honoured) is committed as
// the agent, and the tip is not since — the base, or after a review the
// commit the last gate tested (answering says which).
func (d *Daemon) settleWork(ctx context.Context, runner *runners.Runner, wt, branch, since string, answering bool) (*settled, string) {
	if head, err := gitOutput(ctx, wt, "symbolic-ref", "-q", "HEAD"); err != nil || head != "refs/heads/"+branch {
		return nil, "the agent left its worktree off " + branch + ": the gate tests that branch's commit"
	}
	status, err := gitOutput(ctx, wt, "status", "--porcelain", "--untracked-files=all")
	if err != nil {
		return nil, "the worktree's status could not be read (runnerd's log says why)"
	}
	s := &settled{}
	if status != "" {
		sig, err := chain.Signature(d.agent(runner), d.Now())
		if err != nil {
			return nil, "the agent's work could not be committed: " + err.Error()
		}
		env := []string{"GIT_AUTHOR_NAME=" + sig.Name, "GIT_AUTHOR_EMAIL=" + sig.Email, "GIT_COMMITTER_NAME=" + sig.Name, "GIT_COMMITTER_EMAIL=" + sig.Email}
		missionID := strings.TrimPrefix(branch, ops.WorkBranchPrefix)
		msg := uncommittedMessage + "\n\nThe agent of runner " + runner.ID + " ended with these changes not\ncommitted; runnerd committed them before the gate, so the gate tests\nexactly what lands.\n"
		if ask := askOf(d.Repo.RuntimeDir(), missionID); ask != "" {
			msg += "\nThe ask: " + ask + "\n"
		}
		msg += "\nM1nd-Mission: " + missionID + "\nM1nd-Committed-By: runnerd\n"
		if _, err := gitEnv(ctx, wt, env, "add", "-A"); err != nil {
			d.Logf("%s: git add: %v", branch, err)
			return nil, "the agent's uncommitted work could not be committed (runnerd's log says why)"
		}
		if _, err := gitEnv(ctx, wt, env, "-c", "commit.gpgsign=false", "commit", "-q", "--no-verify", "-m", msg); err != nil {
			d.Logf("%s: git commit: %v", branch, err)
			return nil, "the agent's uncommitted work could not be committed (runnerd's log says why)"
		}
		s.committed = true
	}
	if s.commit, err = gitOutput(ctx, wt, "rev-parse", "HEAD"); err != nil {
		return nil, "the branch's tip could not be read (runnerd's log says why)"
	}
	switch {
	case s.commit == since && answering:
		return nil, "the agent committed nothing in answer to the review: there is no new work for the gate to test"
	case s.commit == since:
		return nil, "the agent committed nothing: there is no work for the gate to test"
	}
	if s.tree, err = gitOutput(ctx, wt, "rev-parse", "HEAD^{tree}"); err != nil {
		return nil, "the branch's tree could not be read (runnerd's log says why)"
	}
	return s, ""
}

// unchangedBy is "" when the gate left the work it tested as it was (HEAD
// at the tested commit, no tracked file changed), and otherwise why not:
// what a gate changed is not what it tested.
func unchangedBy(ctx context.Context, wt string, s *settled) string {
	if head, err := gitOutput(ctx, wt, "rev-parse", "HEAD"); err != nil || head != s.commit {
		return fmt.Sprintf("the gate moved the worktree off the commit it tested (%.12s)", s.commit)
	}
	if out, err := gitOutput(ctx, wt, "status", "--porcelain", "--untracked-files=no"); err != nil || out != "" {
		return "the gate changed tracked files of the work it tested"
	}
	return ""
}

// testedRefs are the evidence refs that name what a gate tested.
func (s *settled) testedRefs() []string {
	return []string{"commit:" + s.commit, "tree:" + s.tree}
}

// gitEnv runs git in dir with env added, its output trimmed.
func gitEnv(ctx context.Context, dir string, env []string, args ...string) (string, error) {
	out, _, err := gitstore.GitCmd{Dir: dir, Env: env}.Run(ctx, args...)
	return strings.TrimSpace(out), err
}
