package ops

import (
	"context"
	"fmt"

	"github.com/m1nd/m1nd/gitstore"
	"github.com/m1nd/m1nd/internal/serve"
)

// InitResult is what Init made (`m1nd init --json`).
type InitResult struct {
	OK         bool     `json:"ok"`
	Brain      string   `json:"brain"`
	RuntimeDir string   `json:"runtime_dir"`
	Created    []string `json:"created"` // what Init made, in order; empty when it was all there
}

// SecretError is an existing runnerd secret that Init will not replace
// (a symlink, readable by others, malformed): the operator repairs or
// removes it.
type SecretError struct{ Err error }

// Error is the secret's problem, naming its path.
func (e *SecretError) Error() string { return e.Err.Error() }

// Unwrap is the secret's problem.
func (e *SecretError) Unwrap() error { return e.Err }

// HookInstaller installs the brain's git hooks and returns the paths it
// wrote. The front end passes githook's installer: githook stands above
// ops (DESIGN §1), so ops is handed it rather than importing it.
type HookInstaller func(repo *gitstore.Repo) ([]string, error)

// Init prepares the brain's repository for m1nd, idempotently: the runtime
// dir $(git rev-parse --git-common-dir)/m1nd (never a ref, never pushed),
// the runner daemon's shared secret in it (0600), and the
// reference-transaction git hook, which runs hookCommand (an existing hook
// is kept and chained). Running it again changes nothing.
func (b *Brain) Init(ctx context.Context, installHooks HookInstaller) (*InitResult, error) {
	dir := b.Repo.RuntimeDir()
	res := &InitResult{OK: true, Brain: b.Name, RuntimeDir: dir, Created: []string{}}
	made, err := b.Repo.EnsureRuntimeDir()
	if err != nil {
		return nil, fmt.Errorf("init: the runtime dir: %w", err)
	}
	if made {
		res.Created = append(res.Created, dir)
	}
	made, err = serve.EnsureSecret(dir)
	if err != nil {
		return nil, &SecretError{Err: err}
	}
	if made {
		res.Created = append(res.Created, serve.SecretFile)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	installed, err := installHooks(b.Repo)
	if err != nil {
		return nil, fmt.Errorf("init: %w", err)
	}
	res.Created = append(res.Created, installed...)
	return res, nil
}
