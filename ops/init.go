package ops

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/m1nd/m1nd/brain"
	"github.com/m1nd/m1nd/chain"
	"github.com/m1nd/m1nd/gitstore"
	"github.com/m1nd/m1nd/internal/secret"
	"github.com/m1nd/m1nd/laws"
	"github.com/m1nd/m1nd/rules"
)

// InitResult is what Init made (`m1nd init --json`).
type InitResult struct {
	Brain      string   `json:"brain"`
	RuntimeDir string   `json:"runtime_dir"`
	Created    []string `json:"created"` // what Init made, in order; empty when it was all there
	// Removed is what it took out: m1nd's hook where an earlier m1nd put
	// it, in the shared hooks folder.
	Removed []string `json:"removed,omitempty"`
	// Registered says how the brain's name came to be in refs/m1nd/brain
	// this time: "registered" (first init of a brain), "adopted from
	// REMOTE", or "" when it already was.
	Registered string `json:"registered,omitempty"`
	// Note is what the operator should know: a remote that could not be
	// asked, local letters that carry another name than the adopted one.
	Note string `json:"note,omitempty"`
}

// SecretError is an existing runnerd secret that Init will not replace
// (a symlink, readable by others, malformed): the operator repairs or
// removes it.
type SecretError struct{ Err error }

// Error is the secret's problem, naming its path.
func (e *SecretError) Error() string { return e.Err.Error() }

// Unwrap is the secret's problem.
func (e *SecretError) Unwrap() error { return e.Err }

// HookInstaller writes the brain's git hooks and returns the paths it
// wrote and those it removed. The front end passes githook's installer:
// githook stands above ops (DESIGN §1), so ops is handed it rather than
// importing it.
type HookInstaller func(repo *gitstore.Repo) (written, removed []string, err error)

// Init prepares the brain's repository for m1nd, idempotently: the runtime
// dir $(git rev-parse --git-common-dir)/m1nd (never a ref, never pushed),
// the runner daemon's shared secret in it (0600), and the git hooks
// installHooks writes. Running it again changes nothing.
func (b *Flows) Init(ctx context.Context, installHooks HookInstaller) (*InitResult, error) {
	dir := b.repo.RuntimeDir()
	res := &InitResult{Brain: b.Name(), RuntimeDir: dir, Created: []string{}}
	made, err := b.repo.EnsureRuntimeDir()
	if err != nil {
		return nil, fmt.Errorf("init: the runtime dir: %w", err)
	}
	if made {
		res.Created = append(res.Created, dir)
	}
	made, err = secret.EnsureSecret(b.repo)
	if err != nil {
		return nil, &SecretError{Err: err}
	}
	if made {
		res.Created = append(res.Created, secret.SecretFile)
	}
	if made, err = secret.EnsureRunnerKey(b.repo); err != nil {
		return nil, &SecretError{Err: err}
	} else if made {
		res.Created = append(res.Created, secret.RunnerKeyFile)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	installed, removed, err := installHooks(b.repo)
	if err != nil {
		return nil, fmt.Errorf("init: %w", err)
	}
	res.Created = append(res.Created, installed...)
	res.Removed = removed
	if err := b.register(ctx, res); err != nil {
		return nil, fmt.Errorf("init: %w", err)
	}
	return res, nil
}

// register gives the brain its registered name (refs/m1nd/brain) when it
// has none: the remote's, when a remote holds one (a clone under another
// folder name is the same brain), else this brain's own.
func (b *Flows) register(ctx context.Context, res *InitResult) error {
	if _, ok, err := brain.Registered(b.repo); err != nil || ok {
		return err
	}
	dir := b.repo.RemoteDir()
	remote := b.remote(ctx, dir)
	if remote != "" {
		tracking := chain.TrackingRoot + remote + "/brain"
		_, err := gitstore.Git(ctx, dir, "fetch", "--quiet", "--no-tags", "--no-write-fetch-head", remote, "+"+brain.RegistrationRef+":"+tracking)
		switch {
		case err == nil:
			return b.adopt(ctx, remote, tracking, res)
		case !strings.Contains(err.Error(), "couldn't find remote ref"):
			// Nobody to ask: registering here could split the brain.
			res.Note = fmt.Sprintf("could not ask %s whether it holds this brain's registration (%s); the name is not registered yet: run m1nd init again when %s answers", remote, rules.OneLine(err.Error()), remote)
			return nil
		}
	}
	if _, made, err := brain.Register(ctx, b.repo, b.Name()); err != nil || !made {
		return err
	}
	res.Registered = "registered"
	res.Created = append(res.Created, brain.RegistrationRef)
	return nil
}

// adopt takes the registration fetched from remote at tracking, judged by
// the laws first.
func (b *Flows) adopt(ctx context.Context, remote, tracking string, res *InitResult) error {
	h, ok, err := b.repo.ReadRef(tracking)
	if err != nil || !ok {
		return err
	}
	judge, err := laws.ForSync(b.repo) // taken from a remote: judged as sync judges it
	if err != nil {
		return err
	}
	if f := judge.Check(b.repo, laws.Update{New: h, Ref: brain.RegistrationRef}); f != nil {
		return fmt.Errorf("%s's brain registration breaks the laws, not adopted: %w", remote, f)
	}
	if err := b.repo.UpdateRef(ctx, brain.RegistrationRef, gitstore.ZeroHash, h); err != nil {
		return fmt.Errorf("adopt %s's brain registration: %w", remote, err)
	}
	// The fetch was init's own, not a sync's: its tracking ref goes, so the
	// first sync knows it has seen nothing of the remote yet.
	if _, err := b.repo.DeleteRefs(ctx, []gitstore.Ref{{Name: tracking, Hash: h}}); err != nil {
		return fmt.Errorf("adopt %s's brain registration: %w", remote, err)
	}
	reg, _, err := brain.Registered(b.repo)
	if err != nil {
		return err
	}
	res.Registered, res.Brain = "adopted from "+remote, reg.Name
	if fixed, ok, _ := brain.FixedName(b.repo); ok && fixed != reg.Name {
		res.Note = fmt.Sprintf("this clone's missions carry the name %q; the brain is %q (from %s): new letters carry %q", fixed, reg.Name, remote, reg.Name)
	}
	return nil
}

// remote is the remote init asks for the brain's registration: origin, or
// the only remote; "" for none.
func (b *Flows) remote(ctx context.Context, dir string) string {
	out, err := gitstore.Git(ctx, dir, "remote")
	if err != nil {
		return ""
	}
	remotes := strings.Fields(out)
	if slices.Contains(remotes, "origin") {
		return "origin"
	}
	if len(remotes) == 1 {
		return remotes[0]
	}
	return ""
}
