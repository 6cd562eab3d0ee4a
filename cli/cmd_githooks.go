package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/m1nd/m1nd/brain"
	"github.com/m1nd/m1nd/githook"
	"github.com/m1nd/m1nd/gitstore"
	"github.com/m1nd/m1nd/laws"
	"github.com/m1nd/m1nd/ops"
	"github.com/m1nd/m1nd/rules"
)

// gitHooksGroup is the hooks command with the subcommands it is given: all of them
// (gitHooksCommand), or the hot ones the small m1nd runs itself (front.go).
func gitHooksGroup(inv *Invocation, subs ...*cli.Command) *cli.Command {
	return &cli.Command{
		Name:  "hooks",
		Usage: "git hooks that keep raw git writes to refs/m1nd/ honest",
		Description: `m1nd writes its refs itself, where git runs no hook, so m1nd checks its
own writes; these hooks check what plain git does where agents write. 'm1nd hooks install'
guards this worktree: its own core.hooksPath (extensions.worktreeConfig)
names m1nd's hooks folder, $(git rev-parse --git-common-dir)/m1nd/hooks,
whose reference-transaction hook runs the repository's own first and whose
other hooks run the repository's own; other worktrees keep git's speed.
runnerd guards the worktrees it makes, and 'm1nd hook install' the one it
runs in. The guard refuses, for refs under refs/m1nd/: deleting a mission, store, memory or
atlas ref; a rewrite (non-fast-forward); a mission commit whose letter does not
validate or does not extend its chain; an archived letter without a human
M1nd-Origin; a landed letter the store does not back; a store commit that
is not a whole store adding exactly 1 to store_version, or that adds a
receipt no human import made; a key set change no registered passkey
proved; a mail, memory or atlas commit that holds anything but its one
valid document in canonical bytes. On a bare remote, 'm1nd hooks install --bare' installs the
same laws as a pre-receive hook, judging every pushed commit as new; with
--require-passkey it also refuses every terminal gesture, before the brain's
first key too (a team's setting), and with --protect main (repeatable) it
refuses any push that moves main to a tree no landed mission's gate passed
on — push the brain (m1nd sync) before the branch. A remote takes its first
key set (refs/m1nd/keys) only when it is the team's, named by its
fingerprint with --trust-key 'abcd 0123 4567 89ef' (repeatable; 'm1nd brain
keys' shows it): without it, no first key set at all, so an agent that
pushes its own first squats nothing; a remote that already holds another
first key set is refused the option. It installs no per-ref
hook there (the server's gc keeps git's speed), and running it again takes
out the one an earlier m1nd put beside it. An existing pre-receive is kept
(in hooks/m1nd-chained/) and runs first, under its own name.`,
		Subcommands: subs,
	}
}

// gitHooksCommand is the hooks command with every subcommand.
func gitHooksCommand(inv *Invocation) *cli.Command {
	return gitHooksGroup(inv,
		newHooksInstallCmd(inv, true, nil),
		newHooksInstallCmd(inv, false, nil),
		newHooksRunCmd(inv, nil),
	)
}

// hooksInstallOptions is what hooks install and hooks uninstall run on.
// The policy flags are hooks install's alone; they are checked once the
// repository is open, as they always were.
type hooksInstallOptions struct {
	IO             *IOStreams
	JSON           bool
	Repo           func() (*gitstore.Repo, error)
	Install        bool // false: uninstall
	Bare           bool
	RequirePasskey bool
	Protect        []string
	TrustKeys      []string // first-key fingerprints, as typed
	Print          bool
}

// newHooksInstallCmd is hooks install or, without install, hooks
// uninstall; a test's runF sees the options instead of running it.
func newHooksInstallCmd(inv *Invocation, install bool, runF func(context.Context, *hooksInstallOptions) error) *cli.Command {
	cmd := &cli.Command{
		Name:  "install",
		Usage: "guard this worktree against raw git writes to refs/m1nd/ (--bare: the pre-receive hook of a remote)",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "bare", Usage: "install the pre-receive hook (for a bare remote)"},
			&cli.BoolFlag{Name: "require-passkey", Usage: "with --bare: refuse every terminal gesture, before the brain's first passkey too (a team's remote)"},
			&cli.StringSliceFlag{Name: "protect", Usage: "with --bare: refuse a push that moves `BRANCH` to a tree no landed mission gated (repeatable)"},
			&cli.StringSliceFlag{Name: "trust-key", Usage: "with --bare: take only the first key set with this `FINGERPRINT` (the team's, from m1nd brain keys; repeatable)"},
			&cli.BoolFlag{Name: "print", Usage: "with --bare: print the pre-receive script instead of installing it (for a forge that holds hooks itself: Gitea's git hooks)"},
			JSONFlag,
		},
		Before: NoArgs,
	}
	if !install {
		cmd.Name, cmd.Usage, cmd.Flags = "uninstall", "unguard this worktree, and remove m1nd's hooks from the shared folder (a chained earlier hook goes back in place)", []cli.Flag{JSONFlag}
	}
	cmd.Action = func(c *cli.Context) error {
		opts := &hooksInstallOptions{IO: inv.io, JSON: c.Bool("json"), Repo: inv.OpenRepo, Install: install, Bare: c.Bool("bare"),
			RequirePasskey: c.Bool("require-passkey"), Protect: c.StringSlice("protect"), TrustKeys: c.StringSlice("trust-key"), Print: c.Bool("print")}
		return RunWith(c.Context, opts, runF, runHooksInstall)
	}
	return cmd
}

// runHooksInstall installs m1nd's git hooks, or removes them.
func runHooksInstall(ctx context.Context, opts *hooksInstallOptions) error {
	repo, err := opts.Repo()
	if err != nil {
		return err
	}
	install := opts.Install
	dir := githook.SharedHooksDir(repo) // a remote's, and where an earlier m1nd put its hook
	if !opts.Bare && install {
		dir = githook.GuardDir(repo)
	}
	policy, err := opts.pushPolicy()
	if err != nil {
		return err
	}
	if install && opts.Bare && !opts.Print {
		if err := keepsItsKeys(repo, policy); err != nil {
			return err
		}
	}
	args := map[string][]string{githook.GitHookPreReceive: policy.HookArgs()}
	if opts.Print {
		if !opts.Bare || !install {
			return Usagef("--print prints a remote's pre-receive script: use it with hooks install --bare")
		}
		_, err := fmt.Fprint(opts.IO.Out, githook.Script(githook.GitHookPreReceive, HookCommandName(), policy.HookArgs()...))
		return err
	}
	if install && opts.Bare && githook.GiteaManaged(dir) {
		return Usagef("%s is a Gitea repository's (Gitea runs %s.d/gitea and writes its hooks again when it regenerates them, so a hook m1nd writes there does not last): "+
			"give Gitea m1nd's pre-receive instead, as the repository's git hook (Settings → Git Hooks → pre-receive, or the API), with DISABLE_GIT_HOOKS = false in its app.ini; "+
			"m1nd hooks install --bare --print prints the script to paste (docs/sync.md: Gitea)", dir, githook.GitHookPreReceive)
	}
	changed, err := setHooks(ctx, repo, dir, opts, args)
	if err != nil {
		return err
	}
	return opts.IO.Reply(opts.JSON, map[string]any{"hooks_dir": dir, "changed": changed}, func(w io.Writer) error {
		printChanged(w, dir, changed, install)
		return nil
	})
}

// pushPolicy is the remote's policy the flags ask for; each of its flags
// is a remote's, so it takes --bare.
func (opts *hooksInstallOptions) pushPolicy() (githook.PushPolicy, error) {
	if opts.RequirePasskey && !opts.Bare {
		return githook.PushPolicy{}, Usagef("--require-passkey is the policy of a remote's pre-receive: use it with --bare")
	}
	protect, err := protectedBranches(opts.Protect)
	if err != nil {
		return githook.PushPolicy{}, err
	}
	if len(protect) > 0 && !opts.Bare {
		return githook.PushPolicy{}, Usagef("--protect is the policy of a remote's pre-receive: use it with --bare")
	}
	trust, err := trustedKeys(opts.TrustKeys)
	if err != nil {
		return githook.PushPolicy{}, err
	}
	if len(trust) > 0 && !opts.Bare {
		return githook.PushPolicy{}, Usagef("--trust-key is the policy of a remote's pre-receive: use it with --bare")
	}
	return githook.PushPolicy{RequirePasskey: opts.RequirePasskey, Protect: protect, TrustKeys: trust}, nil
}

// printChanged says what hooks install or uninstall changed in dir.
func printChanged(w io.Writer, dir string, changed []string, install bool) {
	if len(changed) == 0 {
		fmt.Fprintf(w, "%s: nothing to change\n", dir)
	}
	verb := "installed "
	if !install {
		verb = githook.RemovedPrefix
	}
	for _, c := range changed {
		if !strings.HasPrefix(c, githook.RemovedPrefix) {
			c = verb + c
		}
		fmt.Fprintln(w, c)
	}
}

// setHooks installs or removes what opts asks: on a remote (--bare) its
// pre-receive alone (a per-ref hook there would make the server's own gc
// crawl), taking out the reference-transaction hook an earlier m1nd put
// beside it; in a worktree, the guard (githook.Guard). Uninstalling takes
// out all of them.
func setHooks(ctx context.Context, repo *gitstore.Repo, dir string, opts *hooksInstallOptions, args map[string][]string) ([]string, error) {
	switch {
	case !opts.Install:
		changed, err := githook.SetGitHooks(dir, []string{githook.GitHookReferenceTransaction, githook.GitHookPreReceive}, false, "", nil)
		if err != nil || repo.WorkTree() == "" {
			return changed, err
		}
		did, err := githook.Unguard(ctx, repo, repo.WorkTree())
		if did {
			changed = append(changed, repo.WorkTree()+": core.hooksPath unset")
		}
		return changed, err
	case opts.Bare:
		changed, err := githook.SetGitHooks(dir, []string{githook.GitHookPreReceive}, true, HookCommandName(), args)
		if err != nil {
			return changed, err
		}
		gone, err := githook.SetGitHooks(dir, []string{githook.GitHookReferenceTransaction}, false, "", nil)
		for _, g := range gone {
			changed = append(changed, githook.RemovedPrefix+g)
		}
		return changed, err
	case repo.WorkTree() == "":
		return nil, Usagef("this repository is bare: it has no worktree to guard; for a remote, run m1nd hooks install --bare")
	}
	changed, err := githook.Guard(ctx, repo, repo.WorkTree(), HookCommandName())
	if hp := (*githook.HooksPathError)(nil); errors.As(err, &hp) {
		return changed, Usagef("%s", hp.Msg) // the operator's to settle
	}
	return changed, err
}

// trustedKeys reads the fingerprints given to --trust-key.
func trustedKeys(typed []string) ([]string, error) {
	var out []string
	for _, t := range typed {
		fp, err := brain.ParseFingerprint(t)
		if err != nil {
			return nil, Usagef("--trust-key: %v", err)
		}
		if !slices.Contains(out, fp) {
			out = append(out, fp)
		}
	}
	return out, nil
}

// keepsItsKeys refuses to install, on a remote that holds a key set
// already, a trust its first set is not in: the remote would keep a key
// set its admin does not trust (an agent's, pushed first), and refuse
// every push of the team's.
func keepsItsKeys(repo *gitstore.Repo, policy githook.PushPolicy) error {
	head, ok, err := repo.ReadRef(brain.KeysRef)
	if err != nil || !ok || len(policy.TrustKeys) == 0 {
		return err
	}
	first, err := brain.FirstSet(repo, head)
	if err != nil {
		return err
	}
	if fp := first.Fingerprint(); !slices.Contains(policy.TrustKeys, fp) {
		return Usagef("this remote holds a key set already, whose first set (%s) is not one of --trust-key's: if it is not the team's (an agent pushed it first), remove it here with git update-ref -d %s, then install again; if it is, trust %s",
			first.Named(), brain.KeysRef, fp)
	}
	return nil
}

// protectedBranches checks the branch names given to --protect: each a
// branch name git accepts, never one of runnerd's work branches.
func protectedBranches(names []string) ([]string, error) {
	for _, b := range names {
		if !gitstore.ValidRefName(laws.ProtectedRef(b)) || strings.HasPrefix(b, ops.WorkBranchPrefix) || strings.HasPrefix(b, "refs/") {
			return nil, Usagef("--protect %s: not a branch name (give it as main, not refs/heads/main)", rules.Echo(b))
		}
	}
	return names, nil
}

// hooksRunOptions is what hooks run runs on: the hook git names and,
// for reference-transaction, the transaction's state.
type hooksRunOptions struct {
	IO             *IOStreams
	Repo           func() (*gitstore.Repo, error)
	Hook           string
	State          string
	RequirePasskey bool
	Protect        []string
	TrustKeys      []string
}

// newHooksRunCmd parses hooks run; a test's runF sees the options instead
// of running it.
func newHooksRunCmd(inv *Invocation, runF func(context.Context, *hooksRunOptions) error) *cli.Command {
	return &cli.Command{
		Name:      "run",
		Usage:     "run a git hook (git calls this; you do not)",
		ArgsUsage: "reference-transaction STATE | pre-receive [--require-passkey] [--protect BRANCH]... [--trust-key FINGERPRINT]...",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "require-passkey", Usage: "pre-receive: refuse every terminal gesture"},
			&cli.StringSliceFlag{Name: "protect", Usage: "pre-receive: `BRANCH` moves only to gated trees"},
			&cli.StringSliceFlag{Name: "trust-key", Usage: "pre-receive: only the first key set with this `FINGERPRINT`"},
		},
		Action: func(c *cli.Context) error {
			hook := c.Args().First()
			if hook != githook.GitHookReferenceTransaction && hook != githook.GitHookPreReceive {
				return Usagef("unknown git hook %q: want reference-transaction or pre-receive", hook)
			}
			opts := &hooksRunOptions{IO: inv.io, Repo: inv.OpenRepo, Hook: hook, State: c.Args().Get(1),
				RequirePasskey: c.Bool("require-passkey"), Protect: c.StringSlice("protect"), TrustKeys: c.StringSlice("trust-key")}
			return RunWith(c.Context, opts, runF, runGitHook)
		},
	}
}

// runGitHook is what git runs. A refusal prints each fault's code and
// lesson and exits 3, as every m1nd refusal does; git aborts the
// transaction or the push on any non-zero status.
func runGitHook(_ context.Context, opts *hooksRunOptions) error {
	var updates []laws.Update
	var faults []*laws.RefFault
	switch opts.Hook {
	case githook.GitHookReferenceTransaction:
		var err error
		if updates, err = githook.ParseUpdates(opts.IO.In); err != nil {
			return err
		}
		if opts.State != "prepared" {
			return nil // committed and aborted transactions are past judging
		}
		repo, err := opts.Repo()
		if err != nil {
			return err
		}
		if faults, err = githook.CheckTransaction(repo, updates, opts.IO.Kinds); err != nil {
			return err
		}
	default: // pre-receive: the Action let no other hook through
		input, err := io.ReadAll(io.LimitReader(opts.IO.In, 64<<20))
		if err != nil {
			return err
		}
		dir, _ := os.Getwd()
		protect, err := protectedBranches(opts.Protect)
		if err != nil {
			return err
		}
		trust, err := trustedKeys(opts.TrustKeys)
		if err != nil {
			return err
		}
		policy := githook.PushPolicy{RequirePasskey: opts.RequirePasskey, Protect: protect, TrustKeys: trust, Kinds: opts.IO.Kinds}
		if updates, err = githook.ParseRefUpdates(bytes.NewReader(input), policy.Keeps); err != nil {
			return err
		}
		if faults, err = githook.CheckPush(dir, updates, policy); err != nil {
			return err
		}
	}
	for _, f := range faults {
		fmt.Fprintf(opts.IO.Err, "m1nd: refused: %s: %s (%s)\n", f.Code, f.Lesson, f.Ref)
	}
	if len(faults) > 0 {
		return exitStatus(exitRefused)
	}
	return nil
}

// verifyOptions is what verify runs on.
type verifyOptions struct {
	IO   *IOStreams
	JSON bool
	Repo func() (*gitstore.Repo, error)
}

func newVerifyCmd(inv *Invocation, runF func(context.Context, *verifyOptions) error) *cli.Command {
	return &cli.Command{
		Name:  "verify",
		Usage: "check every chain and the store under refs/m1nd/ (ids, seq, prev, schema, store versions)",
		Description: `Walks every mission chain, the store and every mail, memory and atlas ref
from its root and checks each commit as the git hooks would have. Exit 0 when clean, 3 with the
list of faults — for history written with the hooks bypassed.`,
		Flags:  []cli.Flag{JSONFlag},
		Before: NoArgs,
		Action: func(c *cli.Context) error {
			opts := &verifyOptions{IO: inv.io, JSON: c.Bool("json"), Repo: inv.OpenRepo}
			return RunWith(c.Context, opts, runF, runVerify)
		},
	}
}

// runVerify checks every ref under refs/m1nd/ and exits 3 on any fault,
// after listing them.
func runVerify(ctx context.Context, opts *verifyOptions) error {
	repo, err := opts.Repo()
	if err != nil {
		return err
	}
	faults, checked, err := laws.Verify(ctx, repo, opts.IO.Kinds)
	if err != nil {
		return err
	}
	if faults == nil {
		faults = []*laws.RefFault{}
	}
	// Parked history is no fault (sync kept it on purpose), but it waits
	// for its owner: listed until it is re-posted and dropped.
	parked, err := ops.ParkedConflicts(repo)
	if err != nil {
		return err
	}
	err = opts.IO.Reply(opts.JSON, map[string]any{"ok": len(faults) == 0, "refs_checked": checked, "faults": faults, "parked": parked}, func(w io.Writer) error {
		for _, f := range faults {
			fmt.Fprintf(w, "fault %s\n", f.Error())
		}
		for _, p := range parked {
			fmt.Fprintf(w, "parked %s: %s\n", p.Ref, p.Lesson)
		}
		fmt.Fprintf(w, "%s checked, %s\n", rules.Count(checked, "ref"), rules.Count(len(faults), "fault"))
		return nil
	})
	if err != nil {
		return err
	}
	if len(faults) > 0 {
		return exitStatus(exitRefused)
	}
	return nil
}
