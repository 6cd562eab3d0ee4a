package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"syscall"

	"github.com/m1nd/m1nd/session"
	"github.com/urfave/cli/v2"
)

// m1nd is two binaries. The small one, m1nd, is what agents and git start
// at every event; it links only the hot verbs, so it starts in a fraction
// of the time the whole CLI takes (a smaller binary, fewer packages to
// initialise, no WebAuthn, no MCP SDK). Every other verb it hands to
// m1nd-full, the whole CLI, by exec: same process, same streams, same exit
// status.

// FrontName and FullName are the two binaries' names.
const (
	FrontName = "m1nd"
	FullName  = "m1nd-full"
)

// InstallCommand installs both binaries, the way the README does.
const InstallCommand = "CGO_ENABLED=0 go install -tags urfave_cli_no_docs ./cmd/..."

// hotVerbs are the verbs the small m1nd runs itself: what an agent's host
// or git runs per event (a hook, a post, the mail). Each makes its group
// holding only itself, exactly as Main's table has it: a call builds the
// one verb it runs.
var hotVerbs = []hotVerb{
	{[2]string{"hook", session.HostClaude}, func(inv *Invocation) *cli.Command {
		return hookGroup(inv, newHookRunCmd(inv, session.HostClaude, nil))
	}},
	{[2]string{"hook", session.HostCodex}, func(inv *Invocation) *cli.Command {
		return hookGroup(inv, newHookRunCmd(inv, session.HostCodex, nil))
	}},
	{[2]string{"hooks", "run"}, func(inv *Invocation) *cli.Command { return gitHooksGroup(inv, newHooksRunCmd(inv, nil)) }},
	{[2]string{"mission", "post"}, func(inv *Invocation) *cli.Command { return missionGroup(inv, newMissionPostCmd(inv, nil)) }},
	{[2]string{"mission", "next"}, func(inv *Invocation) *cli.Command { return missionGroup(inv, newMissionNextCmd(inv, nil)) }},
	{[2]string{"mail", "send"}, func(inv *Invocation) *cli.Command { return mailGroup(inv, newMailSendCmd(inv, nil)) }},
	{[2]string{"mail", "inbox"}, func(inv *Invocation) *cli.Command { return mailGroup(inv, newMailInboxCmd(inv, nil)) }},
}

// hotVerb is one verb of the small m1nd: its path and how its group is
// made.
type hotVerb struct {
	path [2]string
	make func(inv *Invocation) *cli.Command
}

// Front is the small m1nd: a hot verb runs here, anything else (another
// verb, --help, completion, a typo) is handed to m1nd-full, which answers
// it as Main would. It returns only when it ran the verb or could not hand
// it over.
func Front(ctx context.Context, args []string, io *IOStreams) int {
	i := hot(args)
	if i < 0 {
		return handOver(args, io)
	}
	inv := &Invocation{io: io}
	return inv.run(ctx, args, newApp(inv, []*cli.Command{hotVerbs[i].make(inv)}))
}

// hot is the index in hotVerbs of the hot verb args name, which the small
// m1nd answers exactly as m1nd-full would, or -1. It errs towards
// m1nd-full, which answers everything: a flag before the verb other than
// -C, and any word that asks for help or completion, go there.
func hot(args []string) int {
	rest, ok := afterDir(args)
	if !ok || len(rest) < 2 {
		return -1
	}
	i := slices.IndexFunc(hotVerbs, func(v hotVerb) bool { return v.path == [2]string{rest[0], rest[1]} })
	for _, a := range rest[2:] {
		if a == "--" {
			break
		}
		switch a {
		case "-h", "-help", "--help", "help", completionFlag:
			return -1
		}
	}
	return i
}

// afterDir is args past the program name and a leading -C DIR (or
// -C=DIR); ok is false when another flag comes before the verb.
func afterDir(args []string) (rest []string, ok bool) {
	rest = args[min(1, len(args)):]
	for len(rest) > 0 && strings.HasPrefix(rest[0], "-") {
		switch flag := strings.TrimLeft(rest[0], "-"); {
		case flag == "C" && len(rest) > 1:
			rest = rest[2:]
		case strings.HasPrefix(flag, "C="):
			rest = rest[1:]
		default:
			return rest, false
		}
	}
	return rest, true
}

// handOver execs m1nd-full with args; it returns only when it cannot.
func handOver(args []string, io *IOStreams) int {
	path, argv, err := fullCommand(args)
	verb := "this"
	if rest, _ := afterDir(args); len(rest) > 0 {
		verb = strings.Join(rest[:min(2, len(rest))], " ")
	}
	if err == nil && argv[0] == "go" {
		// go run compiles before it runs, silently: say what the wait is.
		fmt.Fprintf(io.Err, "m1nd: %s is %s's: building it (go run ./cmd/%s; the first build takes a minute or two)…\n", verb, FullName, FullName)
	}
	if err == nil {
		err = syscall.Exec(path, argv, append(os.Environ(), FrontBuildEnv+"="+ReadVersion().String()))
	}
	fmt.Fprintf(io.Err, "m1nd: %s is run by %s, which the small m1nd hands it to: %v\n", verb, FullName, err)
	return exitInternal
}

// FrontBuildEnv carries the small m1nd's build (ReadVersion) to the
// m1nd-full it hands a verb to: the two answer as one CLI only when they
// are one build.
const FrontBuildEnv = "M1ND_FRONT_BUILD"

// CheckFrontBuild is m1nd-full's first step: a verb the small m1nd
// handed over is refused when the two binaries are not one build (one was
// installed again without the other), since they would answer as two
// different CLIs. It takes the variable out of the environment, so what
// m1nd-full starts does not inherit it. Two builds of one modified
// checkout carry the same commit and pass.
func CheckFrontBuild() error {
	front, handed := os.LookupEnv(FrontBuildEnv)
	if !handed {
		return nil
	}
	os.Unsetenv(FrontBuildEnv)
	if own := ReadVersion().String(); front != own {
		return fmt.Errorf("%s is %s, and the m1nd that handed it this verb is %s: the two are one CLI, installed together (%s)", FullName, own, front, InstallCommand)
	}
	return nil
}

// errNoFull says where m1nd-full was looked for.
var errNoFull = errors.New(FullName + " is neither beside this m1nd nor on PATH; " + InstallCommand + " installs both")

// fullCommand is how to run m1nd-full with args: the one beside this
// binary (an install puts both in one folder), else, for a go run build in
// the m1nd source folder, go run of m1nd-full there, else m1nd-full on
// PATH, as git finds git-<verb>.
func fullCommand(args []string) (path string, argv []string, err error) {
	self, err := os.Executable()
	if err != nil {
		return "", nil, err
	}
	self = Resolved(self)
	if full, ok := beside(self, FullName); ok {
		return full, append([]string{full}, args[1:]...), nil
	}
	if GoRunBuild(self) && InSourceFolder(".") {
		if gobin, err := exec.LookPath("go"); err == nil {
			return gobin, append([]string{"go", "run", "./cmd/" + FullName}, args[1:]...), nil
		}
	}
	if onPath, err := exec.LookPath(FullName); err == nil {
		return onPath, append([]string{onPath}, args[1:]...), nil
	} else if !errors.Is(err, exec.ErrNotFound) && !errors.Is(err, fs.ErrNotExist) {
		return "", nil, err
	}
	return "", nil, errNoFull
}

// GoRunBuild reports whether the binary at path is one go run or go test
// built, in a temporary folder that goes when it exits.
func GoRunBuild(path string) bool {
	return strings.Contains(path, string(filepath.Separator)+"go-build")
}

// InSourceFolder reports whether dir is the root of m1nd's module.
func InSourceFolder(dir string) bool {
	mod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	return err == nil && strings.HasPrefix(string(mod), "module github.com/m1nd/m1nd\n")
}

// beside is the executable named name in the folder of the binary self,
// and whether there is one: an install puts both binaries in one folder.
func beside(self, name string) (string, bool) {
	path := filepath.Join(filepath.Dir(self), name)
	fi, err := os.Stat(path)
	return path, err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}

// ThisM1nd is the m1nd a hook or a hint should name for this binary: the
// small m1nd beside it when this is m1nd-full (it hands on what it does
// not run), else this binary.
func ThisM1nd() (string, error) {
	self, err := os.Executable()
	if err != nil {
		return "", err
	}
	self = Resolved(self)
	if filepath.Base(self) == FullName {
		if front, ok := beside(self, FrontName); ok {
			return front, nil
		}
	}
	return self, nil
}

// Process runs main as the process: the collector paced for short calls,
// the first SIGINT or SIGTERM cancelling main's context, and main's exit
// status the process's. m1nd-full runs this way.
func Process(main func(ctx context.Context, args []string, io *IOStreams) int) {
	paceCollector()
	ctx, stop := signalContext()
	code := main(ctx, os.Args, SystemIO())
	stop()
	os.Exit(code)
}

// ProcessFront runs the small m1nd as the process. It watches no signal:
// a hot verb lives milliseconds and never waits, so a signal ends it as
// it ends a git command, and every write it makes is a compare-and-swap
// under a lock stamped with its pid that the next writer clears
// (gitstore), so a kill at any point leaves every ref valid. Watching
// would start two threads, a twentieth of a hot verb's time; a verb it
// hands on is m1nd-full's, which watches.
func ProcessFront() {
	paceCollector()
	os.Exit(Front(context.Background(), os.Args, SystemIO()))
}

// paceCollector paces the collector for a short call. Most calls live a
// few milliseconds and read everything once, so the collector's default
// pace (a cycle each time the heap doubles from 4 MB) is pure cost: heads
// over 100k missions ran a dozen cycles. A call collects when its heap
// grows fivefold, and hard under a soft 1 GiB ceiling; GOGC and
// GOMEMLIMIT, when set, win.
func paceCollector() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(1 << 30)
	}
}

// signalContext is cancelled by the first SIGINT or SIGTERM: servers stop
// and write what ends their work. From then on a signal kills as it would
// without m1nd, so nothing that does not watch the context can hold the
// process past a second one. Every write is a compare-and-swap: a kill
// leaves every ref valid.
func signalContext() (context.Context, context.CancelFunc) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ctx.Done()
		stop()
	}()
	return ctx, stop
}

// Resolved is path with symbolic links resolved, when it can be.
func Resolved(path string) string {
	if p, err := filepath.EvalSymlinks(path); err == nil {
		return p
	}
	return path
}
