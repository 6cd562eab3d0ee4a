package runnerd

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/m1nd/m1nd/gitstore"
	"github.com/m1nd/m1nd/internal/contain"
	"github.com/m1nd/m1nd/internal/secret"
	"github.com/m1nd/m1nd/mailbox"
	"github.com/m1nd/m1nd/runners"
)

// The agents runnerd spawns, and their gates, run contained (DESIGN §10,
// package contain): each command a runner runs — its setup, its agent,
// its gate, a naming or curation call — starts inside a Landlock domain
// that lets it read what a build reads and write only what its work
// writes. What that is, exactly, is said here, once.

// Containment is how runnerd contains what it spawns: Self is the m1nd
// binary that carries the contain verb (runnerd's own), ABI the kernel's
// Landlock version; Why says why commands run uncontained ("" when they
// are contained).
type Containment struct {
	Self string
	ABI  int
	Why  string
}

// On reports whether commands run contained.
func (c *Containment) On() bool { return c != nil && c.Self != "" && c.Why == "" }

// Describe says in one line how runnerd's commands run.
func (c *Containment) Describe() string {
	switch {
	case c.On():
		return fmt.Sprintf("agents and gates run contained (Landlock ABI %d): their worktree, their branch and their own records, never runnerd's key, the repository's config or hooks, or other agents' records", c.ABI)
	case c == nil || c.Self == "":
		return "agents and gates run UNCONTAINED: this runnerd has no m1nd binary to contain them with"
	}
	return "agents and gates run UNCONTAINED: " + c.Why
}

// NewContainment probes the kernel for runnerd's binary self.
func NewContainment(self string) *Containment {
	abi, why := contain.Probe()
	return &Containment{Self: self, ABI: abi, Why: why}
}

// systemReads are the hierarchies every contained command reads: the
// system, its tools and its devices' view of itself.
var systemReads = []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt", "/nix", "/snap", "/run", "/proc", "/sys", "/var/lib"}

// jail is what contains one mission's commands: where they may write, the
// environment that points their temporary files and m1nd's there.
type jail struct {
	policy contain.Policy
	env    []string
}

// missionJail is the jail of runner's commands working in worktree wt
// (the mission's, or a gate's own), as agent: writes to wt, a temporary
// folder of its own, the object store, wt's git admin folder, the work
// branches and their logs, the m1nd refs an agent's CLI writes, and the
// agent's own folder of delivery records; reads of the system, the git
// dir, PATH and the runner's own grants. Nothing it is granted reaches
// the private folder; the repository's config, hooks and runtime folder
// are never written.
func (d *Daemon) missionJail(ctx context.Context, runner *runners.Runner, wt, agent string) (*jail, error) {
	common, runtime := d.Repo.CommonDir(), d.Repo.RuntimeDir()
	admin, err := gitstore.WorktreeAdminDir(common, wt)
	if err != nil {
		return nil, err
	}
	agentDir, err := mailbox.AgentDir(runtime, agent)
	if err != nil {
		return nil, err
	}
	tmp := wt + ".tmp"
	records := filepath.Join(agentDir, "tmp")
	// Folders git and m1nd write into must stand for the whole run: git
	// prunes an emptied ref folder, and a grant names the folder that
	// was, so each keeps a dot file git's refs ignore.
	keep := []string{
		filepath.Join(common, "refs", "heads", "m1nd"), filepath.Join(common, "logs", "refs", "heads", "m1nd"),
		filepath.Join(common, "refs", "m1nd", "missions"), filepath.Join(common, "refs", "m1nd", "mail"),
		filepath.Join(common, "refs", "m1nd", "memory"), filepath.Join(common, "refs", "m1nd", "atlas"),
	}
	for _, dir := range append(keep, tmp, records) {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
	}
	for _, dir := range keep {
		if err := keepFolder(dir); err != nil {
			return nil, err
		}
	}
	write := append([]string{wt, tmp, filepath.Join(common, "objects"), admin, agentDir}, keep...)
	write = append(write, runner.WritePaths...)
	read := append(append([]string{common}, systemReads...), d.toolReads()...)
	read = append(append(read, runner.ReadPaths...), commandFiles(runner)...)
	p, err := d.checkGrants(contain.Policy{Read: read, Write: write, Devices: []string{"/dev"}})
	if err != nil {
		return nil, err
	}
	return &jail{policy: p, env: []string{
		"TMPDIR=" + tmp,
		"M1ND_RUNTIME_TMP=" + records,
	}}, nil
}

// callJail is the jail of a naming or curation call in the main worktree:
// it reads, and writes nothing but a temporary folder.
func (d *Daemon) callJail(runner *runners.Runner, dir string) (*jail, error) {
	tmp, err := os.MkdirTemp(filepath.Dir(secret.PrivateDir(d.Repo)), "call-*.tmp")
	if err != nil {
		return nil, err
	}
	read := append(append([]string{d.Repo.CommonDir(), dir}, systemReads...), d.toolReads()...)
	read = append(read, commandFiles(runner)...)
	p, err := d.checkGrants(contain.Policy{Read: append(read, runner.ReadPaths...), Write: append([]string{tmp}, runner.WritePaths...), Devices: []string{"/dev"}})
	if err != nil {
		return nil, err
	}
	return &jail{policy: p, env: []string{"TMPDIR=" + tmp}}, nil
}

// commandFiles are the files runner's pinned command names — the program
// and each absolute path among its arguments (a script it runs) — which
// the human approved with the pin: the contained command reads them.
func commandFiles(runner *runners.Runner) []string {
	var out []string
	if len(runner.Command) > 0 {
		if p, err := exec.LookPath(runner.Command[0]); err == nil {
			out = append(out, p)
		}
	}
	for _, a := range runner.Command[min(1, len(runner.Command)):] {
		if filepath.IsAbs(a) {
			out = append(out, a)
		}
	}
	return out
}

// toolReads are the folders a command's tools come from: PATH (absolute
// entries), runnerd's own binary, and git's user configuration.
func (d *Daemon) toolReads() []string {
	var out []string
	for _, dir := range filepath.SplitList(os.Getenv("PATH")) {
		if filepath.IsAbs(dir) {
			out = append(out, dir)
		}
	}
	if c := d.Contain; c != nil && c.Self != "" {
		out = append(out, filepath.Dir(c.Self))
	}
	if home, err := os.UserHomeDir(); err == nil {
		out = append(out, filepath.Join(home, ".gitconfig"), filepath.Join(home, ".config", "git"))
	}
	if g := os.Getenv("GIT_CONFIG_GLOBAL"); filepath.IsAbs(g) {
		out = append(out, g)
	}
	return out
}

// checkGrants keeps what the sandbox must never open out of a policy,
// each grant cleaned: a read grant that reaches the private folder is
// left out (with a line in the log), as is a relative one (a PATH entry
// such as "."); a write grant that reaches the private folder or the git
// dir's own files (its config, hooks, runtime folder) from above refuses
// the run.
func (d *Daemon) checkGrants(p contain.Policy) (contain.Policy, error) {
	private := secret.PrivateDir(d.Repo)
	if real, err := filepath.EvalSymlinks(filepath.Dir(private)); err == nil {
		private = filepath.Join(real, filepath.Base(private))
	}
	common := d.Repo.CommonDir()
	guarded := []string{private, filepath.Join(common, "config"), filepath.Join(common, "hooks"), d.Repo.RuntimeDir()}
	var out contain.Policy
	out.Devices = p.Devices
	for _, r := range p.Read {
		if !filepath.IsAbs(r) {
			continue // a relative PATH entry: it names no one folder
		}
		r = filepath.Clean(r)
		if contain.Covers(resolved(r), private) {
			d.Logf("contain: %s is left out of what agents read: it holds runnerd's private folder", r)
			continue
		}
		out.Read = append(out.Read, r)
	}
	for _, w := range p.Write {
		w = filepath.Clean(w)
		for _, g := range guarded {
			if contain.Covers(resolved(w), g) {
				return contain.Policy{}, fmt.Errorf("%s may not be written by agents: it holds %s", w, g)
			}
		}
		out.Write = append(out.Write, w)
	}
	return out, nil
}

// resolved is path with its symbolic links resolved, as the kernel
// grants it; path itself when it does not resolve.
func resolved(path string) string {
	if real, err := filepath.EvalSymlinks(path); err == nil {
		return real
	}
	return path
}

// keepFolder puts a dot file in dir, which git's ref iteration passes
// over, so that git never prunes dir while a contained command has it.
func keepFolder(dir string) error {
	path := filepath.Join(dir, ".m1nd-keep")
	if _, err := os.Lstat(path); err == nil {
		return nil
	}
	return gitstore.WriteFileAtomic(path, nil, 0o644)
}

// selfPath is the m1nd runnerd runs as: what its guard hooks call.
func (d *Daemon) selfPath() string {
	if c := d.Contain; c != nil && c.Self != "" {
		return c.Self
	}
	if self, err := os.Executable(); err == nil {
		return self
	}
	return "m1nd"
}

// wrap is argv started in j through the contain verb, with env and j's
// own variables; argv and env unchanged when containment is off.
func (d *Daemon) wrap(j *jail, argv, env []string) ([]string, []string, error) {
	if !d.Contain.On() || j == nil {
		return argv, env, nil
	}
	env = append(append([]string{}, env...), j.env...)
	return contain.Command(d.Contain.Self, j.policy, argv, withGitConfig(env, [][2]string{{"gc.auto", "0"}, {"maintenance.auto", "false"}}))
}

// runIn runs argv in dir, contained by j (when containment is on), as
// runProcess runs it: a command that cannot be contained does not run.
func (d *Daemon) runIn(ctx context.Context, j *jail, dir string, env []string, limit time.Duration, logPath string, stdin io.Reader, stdoutOnly bool, started func(pid int), argv ...string) result {
	if j != nil {
		// Found here, as os/exec would find it: a command that is not there
		// says so, rather than the contain verb's failure to exec it.
		name := argv[0]
		if strings.Contains(name, "/") && !filepath.IsAbs(name) {
			name = filepath.Join(dir, name) // as exec.Cmd resolves it, from Dir
		}
		if _, err := exec.LookPath(name); err != nil {
			return result{err: err}
		}
	}
	argv, env, err := d.wrap(j, argv, env)
	if err != nil {
		return result{err: err}
	}
	return runProcess(ctx, dir, env, limit, logPath, stdin, stdoutOnly, started, argv[0], argv[1:]...)
}

// jailFor is the jail of runner's commands in wt (nil when containment
// is off), and a function that removes its temporary folder.
func (d *Daemon) jailFor(ctx context.Context, runner *runners.Runner, wt string) (*jail, func(), error) {
	if !d.Contain.On() {
		return nil, func() {}, nil
	}
	j, err := d.missionJail(ctx, runner, wt, d.agent(runner))
	if err != nil {
		return nil, nil, err
	}
	return j, func() { os.RemoveAll(wt + ".tmp") }, nil
}

// withGitConfig is env with git configuration added through
// GIT_CONFIG_COUNT, after what env sets that way already: a contained git
// never starts a housekeeping run it could not finish (it writes the git
// dir).
func withGitConfig(env []string, set [][2]string) []string {
	n := 0
	out := make([]string, 0, len(env)+2*len(set)+1)
	for _, e := range env {
		if v, ok := strings.CutPrefix(e, "GIT_CONFIG_COUNT="); ok {
			n, _ = strconv.Atoi(v)
			continue
		}
		out = append(out, e)
	}
	for _, kv := range set {
		out = append(out, fmt.Sprintf("GIT_CONFIG_KEY_%d=%s", n, kv[0]), fmt.Sprintf("GIT_CONFIG_VALUE_%d=%s", n, kv[1]))
		n++
	}
	return append(out, fmt.Sprintf("GIT_CONFIG_COUNT=%d", n))
}
