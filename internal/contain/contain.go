// Package contain runs the agents runnerd spawns, and their gates, inside
// a Landlock domain (DESIGN §10): they may read what a build needs (the
// system, the repository's git dir, the tools on PATH) and write only
// their worktree, a temporary folder of their own, the object store, their
// branch, the m1nd refs an agent's CLI writes, and their own folder of
// delivery records. Nothing else of the repository — its config, its
// hooks, runners.toml, other agents' records, side records, caches — and
// nothing of runnerd's private folder (its key and secret) is in reach;
// nor can a contained process signal or ptrace runnerd, which stands
// outside its domain.
//
// A Go process cannot put a domain on a child it starts (os/exec has no
// hook between fork and exec), so runnerd starts its own binary with the
// hidden verb `contain`: the policy rides in the environment
// (PolicyEnv), the process restricts itself on one locked thread, and
// execs the real command, which inherits the domain. Landlock needs no
// privilege (no_new_privs is set first) and binds root as any user.
package contain

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"

	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// Verb is the hidden CLI verb that applies a policy and execs a command.
const Verb = "contain"

// PolicyEnv carries the policy to the `contain` verb; it is removed from
// the environment the command sees.
const PolicyEnv = "M1ND_CONTAIN_POLICY"

// MinABI is the Landlock ABI containment needs: 6 scopes signals and
// abstract UNIX sockets to the domain (runnerd cannot be signalled),
// besides the file rights of the earlier versions.
const MinABI = 6

// Policy is what a contained process may touch. Paths are absolute; a
// path that does not exist is left out.
type Policy struct {
	// Read are hierarchies read and executed, never written.
	Read []string `json:"read"`
	// Write are hierarchies read, written, made and removed in, files
	// linked and renamed across (git and m1nd move a file into place).
	Write []string `json:"write"`
	// Devices are hierarchies of device files read and written (/dev).
	Devices []string `json:"devices,omitempty"`
}

// ParsePolicy reads a policy as Command wrote it. Every path must be
// absolute and clean: a relative one would be granted relative to
// wherever the command starts.
func ParsePolicy(data []byte) (Policy, error) {
	var p Policy
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return Policy{}, fmt.Errorf("the policy does not read: %w", err)
	}
	if dec.More() {
		return Policy{}, errors.New("the policy does not read: data after it")
	}
	for _, set := range [][]string{p.Read, p.Write, p.Devices} {
		for _, path := range set {
			if !filepath.IsAbs(path) || filepath.Clean(path) != path || strings.ContainsRune(path, 0) {
				return Policy{}, fmt.Errorf("the policy grants %q: a grant is an absolute, clean path", path)
			}
		}
	}
	return p, nil
}

// Probe is the Landlock ABI the running kernel offers, 0 with why when it
// offers none containment can use.
func Probe() (abi int, why string) {
	v, err := ll.LandlockGetABIVersion()
	switch {
	case errors.Is(err, syscall.ENOSYS) || errors.Is(err, syscall.EOPNOTSUPP):
		return 0, "this kernel has no Landlock (Linux 5.13+ with the landlock LSM enabled)"
	case err != nil:
		return 0, fmt.Sprintf("Landlock cannot be asked: %v", err)
	case v < MinABI:
		return v, fmt.Sprintf("this kernel's Landlock is ABI %d; containment needs %d (Linux 6.12+) to keep agents from signalling runnerd", v, MinABI)
	}
	return v, ""
}

// Covers reports whether granting dir would reach path: dir is path or
// one of its ancestors.
func Covers(dir, path string) bool {
	dir, path = filepath.Clean(dir), filepath.Clean(path)
	return dir == path || dir == "/" || strings.HasPrefix(path, dir+string(filepath.Separator))
}

// Command is argv run contained by policy through self (the m1nd binary
// that has the contain verb): the argv and the environment to start.
func Command(self string, p Policy, argv, env []string) ([]string, []string, error) {
	data, err := json.Marshal(p)
	if err != nil {
		return nil, nil, err
	}
	out := make([]string, 0, len(env)+1)
	for _, e := range env {
		if !strings.HasPrefix(e, PolicyEnv+"=") {
			out = append(out, e)
		}
	}
	return append([]string{self, Verb, "--"}, argv...), append(out, PolicyEnv+"="+string(data)), nil
}

// Exec is the contain verb: it reads the policy from the environment,
// restricts this process to it and execs argv, found on PATH; it returns
// only on failure. Landlock applies to the thread that asks, and exec
// carries that thread's domain into the new program: the thread is
// locked from the restriction to the exec.
func Exec(argv []string) error {
	raw, ok := os.LookupEnv(PolicyEnv)
	if !ok {
		return fmt.Errorf("contain: no %s: this verb is runnerd's", PolicyEnv)
	}
	p, err := ParsePolicy([]byte(raw))
	if err != nil {
		return fmt.Errorf("contain: %w", err)
	}
	if len(argv) == 0 {
		return errors.New("contain: no command")
	}
	path, err := exec.LookPath(argv[0])
	if err != nil {
		return fmt.Errorf("contain: %w", err)
	}
	env := slices.DeleteFunc(os.Environ(), func(e string) bool { return strings.HasPrefix(e, PolicyEnv+"=") })
	// ABI 6's rights and scopes: all containment needs, on every kernel
	// Probe accepts.
	cfg := landlock.Config{HandledAccessFS: landlock.V6.HandledAccessFS, Scoped: landlock.V6.Scoped}
	readDirs, readFiles := existing(p.Read)
	writeDirs, writeFiles := existing(p.Write)
	devices, _ := existing(p.Devices)
	rules := []landlock.Rule{
		landlock.RODirs(readDirs...).IgnoreIfMissing(),
		landlock.ROFiles(readFiles...).IgnoreIfMissing(),
		landlock.RWDirs(writeDirs...).WithRefer().IgnoreIfMissing(),
		landlock.RWFiles(writeFiles...).IgnoreIfMissing(),
		landlock.RWDirs(devices...).WithIoctlDev().IgnoreIfMissing(),
	}
	fd, flags, err := cfg.NewRulesetFD(rules...)
	if err != nil {
		return fmt.Errorf("contain: the Landlock ruleset: %w", err)
	}
	runtime.LockOSThread() // never unlocked: exec replaces the process from this thread
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("contain: no_new_privs: %w", err)
	}
	// A ruleset the kernel would not make means no domain: the command
	// is refused rather than run as if it were contained.
	if fd < 0 {
		return errors.New("contain: this kernel made no Landlock ruleset; the command is not run uncontained")
	}
	if err := ll.LandlockRestrictSelf(fd, flags); err != nil {
		return fmt.Errorf("contain: restrict: %w", err)
	}
	unix.Close(fd)
	return syscall.Exec(path, argv, env)
}

// existing is paths, those that exist: the folders, and the other files
// (a rule names the rights its kind of file has).
func existing(paths []string) (dirs, files []string) {
	for _, p := range paths {
		fi, err := os.Stat(p)
		switch {
		case err != nil:
		case fi.IsDir():
			dirs = append(dirs, p)
		default:
			files = append(files, p)
		}
	}
	return dirs, files
}

// Main runs the contain verb when args (os.Args) call it: handled is
// false for any other verb. It returns only when the command could not be
// started contained, with the status a shell gives a command it cannot
// execute (126), having said why on stderr.
func Main(args []string) (code int, handled bool) {
	if len(args) < 2 || args[1] != Verb {
		return 0, false
	}
	argv := args[2:]
	if len(argv) > 0 && argv[0] == "--" {
		argv = argv[1:]
	}
	err := Exec(argv)
	fmt.Fprintf(os.Stderr, "m1nd: %v\n", err)
	return 126, true
}
