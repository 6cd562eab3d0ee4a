package runners

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/m1nd/m1nd/brain"
	"github.com/m1nd/m1nd/chain"
	"github.com/m1nd/m1nd/gitstore"
	"github.com/m1nd/m1nd/rules"
)

// ConfigFile is the runners' pin file inside the runtime dir.
const ConfigFile = "runners.toml"

// The capabilities a runner may be pinned to.
const (
	CapBuild  = "build-runner"
	CapNaming = "naming-runner"
	CapHand   = "hand-runner"
)

// PacketPlaceholder is replaced in a runner's command by the packet's path.
const PacketPlaceholder = "{packet_file}"

// maxConfig bounds runners.toml: a pin file, not a data file.
const maxConfig = 1 << 20

// Defaults, in seconds.
const (
	DefaultTimeout         = 1800
	DefaultNamingTimeout   = 20
	DefaultCurationTimeout = 300
)

// Runner is one pinned runner: what the operator allows it to do. The
// owner trusts this file, never an announce.
type Runner struct {
	ID                  string   `toml:"id"`
	Capability          string   `toml:"capability"`
	Command             []string `toml:"command"`
	GateCommand         string   `toml:"gate_command"`
	WorkspaceAllowlist  []string `toml:"workspace_allowlist"`
	SetupCommand        string   `toml:"setup_command"`
	TimeoutSecs         int      `toml:"timeout_secs"`
	NamingTimeoutSecs   int      `toml:"naming_timeout_secs"`
	CurationTimeoutSecs int      `toml:"curation_timeout_secs"`
	// ReadPaths and WritePaths are what runnerd's sandbox opens to the
	// runner's commands beyond what a build needs (a toolchain's cache, a
	// client's config folder): absolute folders, part of the pin a human
	// approves. None may reach runnerd's private folder, nor write the git
	// dir's config, hooks or runtime folder.
	ReadPaths  []string `toml:"read_paths"`
	WritePaths []string `toml:"write_paths"`
}

// Timeout is how long the agent (and then the gate) may run.
func (r *Runner) Timeout() time.Duration { return time.Duration(r.TimeoutSecs) * time.Second }

// NamingTimeout bounds one naming call.
func (r *Runner) NamingTimeout() time.Duration {
	return time.Duration(r.NamingTimeoutSecs) * time.Second
}

// CurationTimeout bounds one curation call.
func (r *Runner) CurationTimeout() time.Duration {
	return time.Duration(r.CurationTimeoutSecs) * time.Second
}

// Config is runners.toml.
type Config struct {
	Runners []*Runner    `toml:"runner"`
	Keepers []*KeeperPin `toml:"keeper"`
}

// Runner returns the pinned runner id, or nil.
func (c *Config) Runner(id string) *Runner {
	for _, r := range c.Runners {
		if r.ID == id {
			return r
		}
	}
	return nil
}

// ConfigError names the table and the field at fault.
type ConfigError struct {
	Path  string
	Table string // e.g. `[[runner]] #2 (id "build-1")`
	Field string
	What  string
}

func (e *ConfigError) Error() string {
	switch {
	case e.Table == "":
		return fmt.Sprintf("%s: %s", e.Path, e.What)
	case e.Field == "":
		return fmt.Sprintf("%s: %s: %s", e.Path, e.Table, e.What)
	}
	return fmt.Sprintf("%s: %s, field %s: %s", e.Path, e.Table, e.Field, e.What)
}

// LoadConfig reads and checks runners.toml. A missing file is an empty
// configuration (no runner pinned); anything wrong in one is one error
// naming the table and field.
func LoadConfig(path string) (*Config, error) {
	c := &Config{}
	// Read as every runtime file is: a FIFO or a link here is refused at
	// once, never waited on (an agent can plant one in the runtime folder).
	data, err := gitstore.ReadRuntime(path, maxConfig)
	if errors.Is(err, fs.ErrNotExist) {
		return c, nil
	}
	var notRegular *gitstore.NotRegularError
	if errors.As(err, &notRegular) {
		return nil, &ConfigError{Path: path, What: fmt.Sprintf("it is a %s, not a regular file: m1nd reads runners.toml only as a plain file (it never waits on a pipe or follows a link there); remove it and write the file again", notRegular.Kind)}
	}
	if err != nil {
		return nil, &ConfigError{Path: path, What: rules.OneLine(err.Error())}
	}
	md, err := toml.Decode(string(data), c)
	if err != nil {
		return nil, &ConfigError{Path: path, What: rules.OneLine(err.Error())}
	}
	if undecoded := md.Undecoded(); len(undecoded) > 0 {
		key := undecoded[0].String()
		if field, ok := strings.CutPrefix(key, "runner."); ok {
			return nil, &ConfigError{Path: path, Table: "[[runner]]", Field: field, What: "unknown key (a runner has id, capability, command, gate_command, workspace_allowlist, setup_command, timeout_secs, naming_timeout_secs, curation_timeout_secs, read_paths, write_paths)"}
		}
		if field, ok := strings.CutPrefix(key, "keeper."); ok {
			return nil, &ConfigError{Path: path, Table: "[[keeper]]", Field: field, What: "unknown key (a keeper has agent, client, start, resume, stream, floor, tempo_secs, worktree, timeout_secs, backoff_secs)"}
		}
		return nil, &ConfigError{Path: path, What: fmt.Sprintf("unknown key %s (the file holds [[runner]] and [[keeper]] tables)", key)}
	}
	keeping := map[string]bool{}
	for i, k := range c.Keepers {
		fail := entryFail(path, "[[keeper]]", i, "agent", k.Agent)
		if err := k.Check(fail); err != nil {
			return nil, err
		}
		if keeping[k.Agent] {
			return nil, fail("agent", "the agent %q is kept twice", k.Agent)
		}
		keeping[k.Agent] = true
	}
	seen := map[string]bool{}
	for i, r := range c.Runners {
		fail := entryFail(path, "[[runner]]", i, "id", r.ID)
		if err := checkRunner(r, fail); err != nil {
			return nil, err
		}
		if seen[r.ID] {
			return nil, fail("id", "the id %q is pinned twice", r.ID)
		}
		seen[r.ID] = true
		for field, v := range map[string]*int{"timeout_secs": &r.TimeoutSecs, "naming_timeout_secs": &r.NamingTimeoutSecs, "curation_timeout_secs": &r.CurationTimeoutSecs} {
			if *v < 0 {
				return nil, fail(field, "must be positive")
			}
		}
		if r.TimeoutSecs == 0 {
			r.TimeoutSecs = DefaultTimeout
		}
		if r.NamingTimeoutSecs == 0 {
			r.NamingTimeoutSecs = DefaultNamingTimeout
		}
		if r.CurationTimeoutSecs == 0 {
			r.CurationTimeoutSecs = DefaultCurationTimeout
		}
	}
	return c, nil
}

// entryFail is how the checks of the i-th entry of a table say what is
// wrong with it: a ConfigError naming the entry by its number and, when
// set, by its key (an agent, an id).
func entryFail(path, table string, i int, keyName, key string) func(field, format string, args ...any) error {
	name := fmt.Sprintf("%s #%d", table, i+1)
	if key != "" {
		name += fmt.Sprintf(" (%s %q)", keyName, key)
	}
	return func(field, format string, args ...any) error {
		return &ConfigError{Path: path, Table: name, Field: field, What: fmt.Sprintf(format, args...)}
	}
}

func checkRunner(r *Runner, fail func(field, format string, args ...any) error) error {
	if !rules.ValidID(r.ID) {
		return fail("id", "want "+rules.IDRule)
	}
	switch r.Capability {
	case CapBuild, CapNaming, CapHand:
	case "loop-runner", "review-runner":
		return fail("capability", "%s is not a runnerd capability yet (build-runner, naming-runner or hand-runner)", r.Capability)
	default:
		return fail("capability", "want build-runner, naming-runner or hand-runner")
	}
	if len(r.Command) == 0 || strings.TrimSpace(r.Command[0]) == "" {
		return fail("command", "name the agent to run, as an argv array: command = [\"my-agent\", \"{packet_file}\"]")
	}
	for field, paths := range map[string][]string{"read_paths": r.ReadPaths, "write_paths": r.WritePaths} {
		for _, p := range paths {
			if !filepath.IsAbs(p) {
				return fail(field, "%q is not an absolute path", p)
			}
		}
	}
	if r.Capability != CapBuild {
		return nil
	}
	hasPacket := false
	for _, a := range r.Command {
		hasPacket = hasPacket || strings.Contains(a, PacketPlaceholder)
	}
	if !hasPacket {
		return fail("command", "a build runner's command must contain %s, where the packet's path goes", PacketPlaceholder)
	}
	if strings.TrimSpace(r.GateCommand) == "" {
		return fail("gate_command", "a build runner needs the gate that proves its work, e.g. gate_command = \"go test ./...\"")
	}
	if len(r.WorkspaceAllowlist) == 0 {
		return fail("workspace_allowlist", "a build runner needs the absolute folders it may work in")
	}
	for _, w := range r.WorkspaceAllowlist {
		if !filepath.IsAbs(w) {
			return fail("workspace_allowlist", "%q is not an absolute path", w)
		}
	}
	return nil
}

// WorkspaceAllowed reports whether dir lies inside one of the runner's
// allowed folders, both with symlinks resolved: a link inside an allowed
// folder that points out of it does not count.
func (r *Runner) WorkspaceAllowed(dir string) bool {
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return false
	}
	for _, w := range r.WorkspaceAllowlist {
		root, err := filepath.EvalSymlinks(w)
		if err != nil {
			continue
		}
		if rel, err := filepath.Rel(root, real); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
			return true
		}
	}
	return false
}

// PinHash is what a human approves a runner pin by (refs/m1nd/pins): the
// sha256 of its canonical form, every field that decides what runs, where,
// and what proves it. A pin that changes in any of them is a new pin.
func (r *Runner) PinHash() string {
	sum := sha256.Sum256(chain.CanonicalJSON(struct {
		ID                 string   `json:"id"`
		Capability         string   `json:"capability"`
		Command            []string `json:"command"`
		GateCommand        string   `json:"gate_command"`
		WorkspaceAllowlist []string `json:"workspace_allowlist"`
		SetupCommand       string   `json:"setup_command"`
		TimeoutSecs        int      `json:"timeout_secs"`
		ReadPaths          []string `json:"read_paths,omitempty"`
		WritePaths         []string `json:"write_paths,omitempty"`
	}{r.ID, r.Capability, r.Command, r.GateCommand, r.WorkspaceAllowlist, r.SetupCommand, r.TimeoutSecs, r.ReadPaths, r.WritePaths}))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// Approval is a runner pin as a human approves it, with key, the public
// key of the runnerd that signs what its gate tested (rules.RunnerKey).
func (r *Runner) Approval(key string) brain.ApprovedRunner {
	return brain.ApprovedRunner{ID: r.ID, Pin: r.PinHash(), Key: key, GateCommand: r.GateCommand, Command: append([]string{}, r.Command...)}
}

// ProvesWork reports whether the runner's gate puts missions in
// merge_wait: its pin is the human's to approve.
func (r *Runner) ProvesWork() bool { return r.Capability == CapBuild }
