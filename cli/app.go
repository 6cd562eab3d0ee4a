package cli

import (
	"context"
	"os"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/m1nd/m1nd/brain"
	"github.com/m1nd/m1nd/gitstore"
	"github.com/m1nd/m1nd/ops"
	"github.com/m1nd/m1nd/rules"
)

// Invocation is the state of one run: where output goes, whether it is
// JSON, and the repository once opened.
type Invocation struct {
	io      *IOStreams
	jsonOut bool   // refusals print as a JSON envelope on stdout
	cmdPath string // e.g. "m1nd mission post", for usage hints
	dir     string // -C

	repo   *gitstore.Repo
	opened *ops.Flows // what a brain is (ops.New), opened once per invocation
}

// NewInvocation is one run of m1nd on streams, in dir as -C would have
// it ("" for the working directory): what a verb's run function is handed
// outside Main, in tests.
func NewInvocation(streams *IOStreams, dir string) *Invocation {
	return &Invocation{io: streams, dir: dir}
}

// IO is where the invocation reads and writes.
func (inv *Invocation) IO() *IOStreams { return inv.io }

// version is set at build time with -ldflags "-X github.com/m1nd/m1nd/cli.version=…";
// without it, the build info names the version (version.go).
var version = "dev"

// newApp is the m1nd command line over commands: every verb (Main), or
// the hot ones (Front).
func newApp(inv *Invocation, commands []*cli.Command) *cli.App {
	app := &cli.App{
		Name:                 "m1nd",
		Usage:                "shared memory and context for coding agents, stored in git refs",
		Reader:               inv.io.In,
		Writer:               inv.io.Out,
		ErrWriter:            inv.io.Err,
		HideHelpCommand:      true,
		EnableBashCompletion: true,                         // the hidden --generate-bash-completion the completion scripts call
		ExitErrHandler:       func(*cli.Context, error) {}, // Main maps errors to exit codes
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "C", Usage: "run as if m1nd was started in `DIR` (like git -C)"},
			&cli.StringFlag{Name: colorFlag, Value: colorAuto, Usage: "colour `WHEN`: auto (on a terminal, unless NO_COLOR is set), always or never; after a verb too"},
		},
		Commands: commands,
		Description: `m1nd keeps every piece of agent state in git refs whose commits are JSON
documents. A mission is a chain of letters on refs/m1nd/missions/<id>;
read it with plain git:

   git log refs/m1nd/missions/<id>
   git cat-file blob refs/m1nd/missions/<id>:letter.json

m1nd help VERB [SUBVERB] is VERB [SUBVERB] --help.

Exit status: 0 ok, 1 internal failure, 2 usage error, 3 refused
(a refusal names its code and a one-line lesson).`,
	}
	app.Action = groupAction(inv)
	app.Before = func(c *cli.Context) error {
		inv.dir = c.String("C")
		inv.cmdPath = "m1nd" // a verb's own Before names it more closely
		return inv.io.setColor(c.String(colorFlag), os.Getenv("NO_COLOR"), os.Getenv("TERM"))
	}
	wireUsage(inv, app.Commands, "m1nd")
	app.OnUsageError = func(c *cli.Context, err error, _ bool) error {
		inv.cmdPath = "m1nd"
		return flagUsage(app.VisibleFlags(), err)
	}
	return app
}

// Verbs adds verbs to the command line Main runs: m1nd-full's
// (fullcli), which link what the small m1nd must not. A verb
// named like one of this package's groups (hook) joins that group.
type Verbs func(inv *Invocation) []*cli.Command

// allCommands is every verb m1nd has, in the order --help lists them:
// this package's, and more's in their places.
func allCommands(inv *Invocation, more []*cli.Command) []*cli.Command {
	extra := func(name string) *cli.Command {
		for i, c := range more {
			if c != nil && c.Name == name {
				more[i] = nil
				return c
			}
		}
		return nil
	}
	hook := hookCommand(inv)
	if more := extra("hook"); more != nil {
		hook.Subcommands = append(hook.Subcommands, more.Subcommands...)
	}
	all := []*cli.Command{
		newInitCmd(inv, nil),
		extra("status"),
		missionCommand(inv),
		newLandCmd(inv, nil),
		skeletonCommand(inv),
		newBlocksCmd(inv, nil),
		receiptCommand(inv),
		mailCommand(inv),
		hook,
		extra("sessions"),
		extra("mcp"),
		extra("serve"),
		extra("runnerd"),
		extra("spawn"),
		extra("worktrees"),
		extra("runners"),
		gitHooksCommand(inv),
		newVerifyCmd(inv, nil),
		newSyncCmd(inv, nil),
		memoryCommand(inv),
		followupCommand(inv),
		atlasCommand(inv),
		agentCommand(inv),
		extra("demo"),
		newVersionCmd(inv, nil),
		newCompletionCmd(inv, nil),
		brainCommand(inv),
	}
	all = append(all, more...) // any verb not placed above goes last
	return slices.DeleteFunc(all, func(c *cli.Command) bool { return c == nil })
}

// wireUsage makes every flag-parsing error an exit-2 usage error and every
// unknown subcommand one too, and records, before any verb runs, the
// command path for hints and whether it was asked for --json.
func wireUsage(inv *Invocation, cmds []*cli.Command, parent string) {
	for _, cmd := range cmds {
		path := parent + " " + cmd.Name
		if cmd.OnUsageError == nil { // a hook's own never exits 2
			cmd.OnUsageError = func(c *cli.Context, err error, _ bool) error {
				inv.cmdPath = path
				return flagUsage(cmd.VisibleFlags(), err)
			}
		}
		before := cmd.Before
		cmd.Before = func(c *cli.Context) error {
			inv.cmdPath = path
			inv.jsonOut = c.Bool("json") // refusals print as the JSON envelope
			if before != nil {
				return before(c)
			}
			return nil
		}
		if len(cmd.Subcommands) == 0 {
			addExamples(cmd, path)
			if cmd.BashComplete == nil {
				cmd.BashComplete = completeLeaf(inv, cmd)
			}
		}
		if len(cmd.Subcommands) > 0 {
			cmd.HideHelpCommand = true
			if cmd.Action == nil {
				cmd.Action = groupAction(inv)
			}
			wireUsage(inv, cmd.Subcommands, path)
		}
	}
}

// groupAction runs for a command group called without a known subcommand.
func groupAction(inv *Invocation) cli.ActionFunc {
	return func(c *cli.Context) error {
		if c.Args().Present() {
			return unknownCommand(c.Command.Subcommands, c.Args().First())
		}
		return cli.ShowSubcommandHelp(c)
	}
}

// OpenRepo opens the repository at -C (or the working directory) once.
func (inv *Invocation) OpenRepo() (*gitstore.Repo, error) {
	if inv.repo != nil {
		return inv.repo, nil
	}
	dir := inv.dir
	if dir == "" {
		dir = "."
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return nil, Usagef("cannot change to %s: not a directory", dir)
	}
	repo, err := gitstore.Open(dir)
	if err != nil {
		return nil, Usagef("%v", err)
	}
	if err := repo.ConfigErr(); err != nil {
		return nil, err
	}
	inv.repo = repo
	return repo, nil
}

// OpenBrain opens the repository and names its brain.
func (inv *Invocation) OpenBrain() (*gitstore.Repo, string, error) {
	repo, err := inv.OpenRepo()
	if err != nil {
		return nil, "", err
	}
	name, err := brain.DisplayName(repo)
	if _, refused := rules.AsRefusal(err); refused {
		return nil, "", err // brain_mismatch: git config names another brain
	}
	if err != nil {
		return nil, "", Usagef("%v", err) // a configuration the operator fixes
	}
	return repo, name, nil
}

// Flows opens the brain's flows (ops) once: what the CLI and the tray
// both run. Every verb asks it; the parts of the brain (missions, mail,
// the block store) stay inside, wired in ops.New alone.
func (inv *Invocation) Flows() (*ops.Flows, error) {
	if inv.opened != nil {
		return inv.opened, nil
	}
	repo, name, err := inv.OpenBrain()
	if err != nil {
		return nil, err
	}
	inv.opened = ops.New(repo, name)
	return inv.opened, nil
}

// OpenAs resolves who acts, then opens what a verb acts on (the mail,
// the memory book): the start of every verb that acts as an agent.
func OpenAs[T any](agent func() (string, error), open func() (T, error)) (T, string, error) {
	id, err := agent()
	if err != nil {
		var none T
		return none, "", err
	}
	v, err := open()
	return v, id, err
}

// snapshot reads the current store, refusing no_store when there is none.
func (inv *Invocation) snapshot() (*ops.Flows, *brain.Snapshot, error) {
	s, err := inv.Flows()
	if err != nil {
		return nil, nil, err
	}
	snap, ok, err := s.Snapshot()
	if err != nil {
		return nil, nil, err
	}
	if !ok {
		return nil, nil, rules.Refuse(rules.NoStore, "")
	}
	return s, snap, nil
}

// agentFlag is shared by the verbs that write as an agent.
var agentFlag = &cli.StringFlag{Name: "agent", Usage: "write as agent `ID` (default: $M1ND_AGENT, git config m1nd.agent, owner)"}

// asAgentFlag is agentFlag for the verbs that read as an agent.
var asAgentFlag = &cli.StringFlag{Name: "agent", Usage: "as agent `ID` (default: $M1ND_AGENT, git config m1nd.agent, owner)"}

// JSONFlag is on every read verb.
var JSONFlag = &cli.BoolFlag{Name: "json", Usage: "print JSON"}

// agent resolves who is writing: --agent, $M1ND_AGENT, git config
// m1nd.agent, else "owner".
func (inv *Invocation) agent(c *cli.Context) (string, error) {
	id, from := c.String("agent"), "--agent"
	if id == "" {
		id, from = inv.ambientAgent()
	}
	if id == "" {
		return rules.HumanName, nil
	}
	if !rules.ValidAgentID(id) {
		return "", Usagef("agent id %q (from %s) is not valid: use %s", id, from, rules.AgentIDRule)
	}
	return id, nil
}

// ambientAgent is the agent this process acts as without --agent:
// $M1ND_AGENT, else git config m1nd.agent; "" for the owner.
func (inv *Invocation) ambientAgent() (id, from string) {
	if id := os.Getenv("M1ND_AGENT"); id != "" {
		return id, "M1ND_AGENT"
	}
	if repo, err := inv.OpenRepo(); err == nil {
		if v, ok := repo.ConfigValue("m1nd", "agent"); ok {
			return strings.TrimSpace(v), "git config m1nd.agent"
		}
	}
	return "", ""
}

// ownAgent resolves whose records a verb reads and moves (an inbox, its
// cursor): an agent's own only. --agent naming another agent than the
// one this process acts as is refused not_your_agent; the owner (no
// agent identity) may name any. A speed bump for an agent that calls the
// verb, not a wall: runnerd's containment is what keeps a spawned agent
// out of another's records (DESIGN §10).
func (inv *Invocation) ownAgent(c *cli.Context) (string, error) {
	id, err := inv.agent(c)
	if err != nil || c.String("agent") == "" {
		return id, err
	}
	if self, from := inv.ambientAgent(); self != "" && self != id {
		return "", rules.Refusef(rules.NotYourAgent, "agent", "this process acts as agent %s (%s), and --agent names %s: an agent reads and marks only its own inbox; the owner, with no agent identity set, may read any", rules.Echo(self), from, rules.Echo(id))
	}
	return id, nil
}

// Chdir runs the rest of the invocation in dir, as -C would have: for
// a verb that makes the repository it then works in (demo).
func (inv *Invocation) Chdir(dir string) {
	if dir == inv.dir {
		return
	}
	// What was opened is the old folder's: opened again, in dir, on use.
	if inv.repo != nil {
		inv.repo.Close()
	}
	inv.dir, inv.repo, inv.opened = dir, nil, nil
}

// defaultDir runs the invocation in dir unless -C named a folder: the
// session a hook answers was started there, wherever the host runs it.
func (inv *Invocation) defaultDir(dir string) {
	if inv.dir == "" {
		inv.Chdir(dir)
	}
}

// AgentOf defers resolving who acts until a verb's run asks.
func (inv *Invocation) AgentOf(c *cli.Context) func() (string, error) {
	return func() (string, error) { return inv.agent(c) }
}

// writer resolves who writes mail, memories, follow-ups and shared
// documents: an agent, never the human's name, which anyone could
// otherwise claim in what other agents read as the human's word.
func (inv *Invocation) writer(c *cli.Context) (string, error) {
	id, err := inv.agent(c)
	if err == nil && id == rules.HumanName {
		return "", rules.Refusef(rules.InvalidLetter, "agent", "this write speaks as an agent, and %q is the human's name, which an agent's write may not claim: set --agent, M1ND_AGENT or git config m1nd.agent", rules.HumanName)
	}
	return id, err
}

// WriterOf is writer, for an options struct.
func (inv *Invocation) WriterOf(c *cli.Context) func() (string, error) {
	return func() (string, error) { return inv.writer(c) }
}

// RunWith runs a verb parsed into opts: runF when a test hands one in (it
// sees the options without running anything), else the verb's own run.
func RunWith[O any](ctx context.Context, opts *O, runF, run func(context.Context, *O) error) error {
	if runF != nil {
		return runF(ctx, opts)
	}
	return run(ctx, opts)
}

// OneArg returns the single positional argument a verb takes.
func OneArg(c *cli.Context, what string) (string, error) {
	switch c.NArg() {
	case 0:
		return "", Usagef("missing %s", what)
	case 1:
		return c.Args().First(), nil
	}
	return "", Usagef("too many arguments: want one %s, got %d", what, c.NArg())
}

// NoArgs refuses positional arguments: the Before of every verb that
// takes none, so its Action starts at its work.
func NoArgs(c *cli.Context) error {
	if c.NArg() > 0 {
		return Usagef("unexpected argument %q", c.Args().First())
	}
	return nil
}

// hoistFlags moves flags that follow positional arguments in front of them,
// so `m1nd mission log ID --json` works as it would in git: urfave/cli v2
// stops parsing flags at the first positional argument. Everything after
// "--" stays positional.
func hoistFlags(app *cli.App, args []string) []string {
	if len(args) == 0 {
		return args
	}
	out := []string{args[0]}
	rest := args[1:]
	cmds, flags := app.Commands, app.Flags
	i := 0
	takeFlag := func(dst []string) []string {
		a := rest[i]
		dst = append(dst, a)
		i++
		if !strings.Contains(a, "=") && takesValue(flags, a) && i < len(rest) {
			dst = append(dst, rest[i])
			i++
		}
		return dst
	}
	for i < len(rest) && len(cmds) > 0 {
		a := rest[i]
		if isFlagArg(a) {
			out = takeFlag(out)
			continue
		}
		cmd := findCommand(cmds, a)
		if cmd == nil {
			// A group given a name that is none of its subcommands: left
			// as typed, the group reports the name ("did you mean"), not a
			// flag meant for the subcommand it missed.
			return append(out, rest[i:]...)
		}
		out = append(out, a)
		i++
		cmds, flags = cmd.Subcommands, cmd.Flags
	}
	var flagArgs, positional, afterDashes []string
	for i < len(rest) {
		if rest[i] == "--" {
			afterDashes = rest[i:] // keeps the "--" itself, so flag parsing ends there
			break
		}
		if isFlagArg(rest[i]) {
			flagArgs = takeFlag(flagArgs)
			continue
		}
		positional = append(positional, rest[i])
		i++
	}
	out = append(out, flagArgs...)
	if len(afterDashes) > 0 {
		return append(append(append(out, "--"), positional...), afterDashes[1:]...)
	}
	return append(out, positional...)
}

func isFlagArg(a string) bool { return len(a) > 1 && a[0] == '-' && a != "--" }

func findCommand(cmds []*cli.Command, name string) *cli.Command {
	for _, c := range cmds {
		if c.HasName(name) {
			return c
		}
	}
	return nil
}

func takesValue(flags []cli.Flag, arg string) bool {
	name := strings.TrimLeft(arg, "-")
	for _, f := range flags {
		for _, n := range f.Names() {
			if n == name {
				_, isBool := f.(*cli.BoolFlag)
				return !isBool
			}
		}
	}
	return false
}
