package fullcli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log"
	"os"
	"path/filepath"
	"strings"
	"time"

	mcli "github.com/m1nd/m1nd/cli"
	"github.com/m1nd/m1nd/ops"
	"github.com/m1nd/m1nd/runners"

	"github.com/urfave/cli/v2"

	"github.com/m1nd/m1nd/gitstore"
	"github.com/m1nd/m1nd/internal/secret"
	"github.com/m1nd/m1nd/internal/trayclient"
	"github.com/m1nd/m1nd/internal/wire"
	"github.com/m1nd/m1nd/rules"
	"github.com/m1nd/m1nd/runnerd"
	"github.com/m1nd/m1nd/session"
)

// runnerdOptions is what runnerd runs on.
type runnerdOptions struct {
	IO            *mcli.IOStreams
	Brain         func() (*gitstore.Repo, string, error)
	Config        string // "" for .git/m1nd/runners.toml
	Addr          string
	OwnerURL      string // "" to find the owner in .git/m1nd/serve.json
	Announce      time.Duration
	QueueInterval time.Duration // 0: no landing queue
}

// newRunnerdCmd parses runnerd; a test's runF sees the options instead of
// starting the daemon.
func newRunnerdCmd(inv *mcli.Invocation, runF func(context.Context, *runnerdOptions) error) *cli.Command {
	return &cli.Command{
		Name:  "runnerd",
		Usage: "run the runner daemon: pinned runners, a sibling worktree per mission, the gate",
		Description: `The only process that spawns agents. Runners are pinned by the operator in
.git/m1nd/runners.toml:

   [[runner]]
   id = "build-1"
   capability = "build-runner"          # or naming-runner, hand-runner
   command = ["my-agent", "{packet_file}"]
   gate_command = "go test ./..."
   workspace_allowlist = ["/home/me/src"]
   # setup_command = "npm ci"; timeout_secs = 1800

A mission runs in <parent of the repo>/<repo>.m1nd/<mission_id> on branch
m1nd/<mission_id>: runnerd posts executing, runs the agent, posts gate, runs
the gate and posts merge_wait with a complete receipt candidate, or failed
saying why. It never imports receipts and never posts landed. It announces
its runners to the owner (m1nd serve) every 30 s, authenticated by
.git/m1nd/runnerd.secret (m1nd init makes it); without an owner it tries
again within seconds, and it finds an owner that starts or restarts (its
serve.json) and runners pinned while it runs (runners.toml) within a
second, no restart of either daemon. Its log says what it waits for.

It also keeps the landing queue: every --queue-interval it looks at the
missions in merge_wait whose target or branch moved since their gate, merges
the target into the branch and runs the mission's gate on that merge in a
worktree of its own (<mission>.gate), then posts merge_wait naming the
commit it tested — so a landing only ever moves the target to a gated tree.
A conflict or a failing gate is recorded for the tray and m1nd mission show.`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "config", Usage: "runners `FILE` (default .git/m1nd/runners.toml)"},
			&cli.StringFlag{Name: "addr", Value: runnerd.DefaultAddr, Usage: "listen on loopback `HOST:PORT`"},
			&cli.StringFlag{Name: "owner-url", Usage: "the owner's `URL` (default: found in .git/m1nd/serve.json)"},
			&cli.DurationFlag{Name: "announce-interval", Value: runnerd.AnnounceInterval, Usage: "how often to announce to the owner"},
			&cli.DurationFlag{Name: "queue-interval", Value: runnerd.QueueInterval, Usage: "how often the landing queue looks at the missions that wait (0: no queue)"},
		},
		Before: mcli.NoArgs,
		Action: func(c *cli.Context) error {
			opts := &runnerdOptions{IO: inv.IO(), Brain: inv.OpenBrain, Config: c.String("config"), Addr: c.String("addr"), OwnerURL: c.String("owner-url"),
				Announce: c.Duration("announce-interval"), QueueInterval: c.Duration("queue-interval")}
			return mcli.RunWith(c.Context, opts, runF, runRunnerd)
		},
	}
}

// runRunnerd loads the pinned runners and the secret, listens, and runs
// the daemon until ctx ends; each of those it cannot have is the
// operator's to fix, a usage error.
func runRunnerd(ctx context.Context, opts *runnerdOptions) error {
	repo, name, err := opts.Brain()
	if err != nil {
		return err
	}
	path := opts.Config
	if path == "" {
		path = filepath.Join(repo.RuntimeDir(), runners.ConfigFile)
	}
	cfg, err := runners.LoadConfig(path)
	if err != nil {
		return mcli.Usagef("%v", err)
	}
	secret, err := secret.LoadSecret(secret.SecretPath(repo))
	if errors.Is(err, fs.ErrNotExist) {
		return mcli.Usagef("runnerd secret: %v (m1nd init creates it)", err)
	}
	if err != nil {
		return mcli.Usagef("runnerd secret: %v", err)
	}
	ln, err := runnerd.Listen(opts.Addr)
	if err != nil {
		return mcli.Usagef("%v", err)
	}
	logger := log.New(opts.IO.Err, "m1nd runnerd: ", log.LstdFlags)
	var ids []string
	for _, r := range cfg.Runners {
		ids = append(ids, r.ID+" ("+r.Capability+")")
	}
	fmt.Fprintf(opts.IO.Out, "m1nd runnerd for brain %s on http://%s/ — runners: %s\n", name, ln.Addr(), orNoneText(strings.Join(ids, ", ")))
	self, err := os.Executable()
	if err != nil {
		self = ""
	}
	contained := runnerd.NewContainment(self)
	fmt.Fprintf(opts.IO.Out, "%s\n", contained.Describe())
	d := &runnerd.Daemon{Repo: repo, Brain: name, Config: cfg, ConfigFile: path, Secret: secret, Sessions: session.NewRegistry(repo.RuntimeDir()), OwnerURL: strings.TrimSuffix(opts.OwnerURL, "/"),
		Announce: opts.Announce, QueueInterval: opts.QueueInterval, Logf: logger.Printf, Contain: contained}
	if d.QueueInterval <= 0 {
		d.QueueInterval = -1 // the flag's 0 is "no queue"; the daemon's is "the default"
	}
	return d.Serve(ctx, ln)
}

func orNoneText(s string) string {
	if s == "" {
		return "none pinned"
	}
	return s
}

// loadPins reads what the owner trusts about runners: the operator's pins
// and the shared secret. A missing secret leaves runners unable to talk to
// this owner, which says so. The owner reads runners.toml again when it
// changes (trayclient.Pins.File).
func loadPins(streams *mcli.IOStreams, repo *gitstore.Repo) trayclient.Pins {
	file := filepath.Join(repo.RuntimeDir(), runners.ConfigFile)
	pins := trayclient.Pins{Capabilities: map[string]string{}, File: file, Load: pinnedIn}
	caps, err := pinnedIn(file)
	if err != nil {
		fmt.Fprintf(streams.Err, "m1nd: %v; no runner is pinned\n", err)
	} else {
		pins.Capabilities = caps
	}
	// The secret is read even when no runner is pinned yet: the operator
	// may pin one while the owner runs.
	if secret, err := secret.LoadSecret(secret.SecretPath(repo)); err == nil {
		pins.Secret = secret
	} else if len(caps) > 0 {
		fmt.Fprintf(streams.Err, "m1nd: runnerd secret: %v; runners cannot announce (m1nd init creates it)\n", err)
	}
	return pins
}

// pinnedIn is the runner id → capability pinned in the runners file.
func pinnedIn(file string) (map[string]string, error) {
	cfg, err := runners.LoadConfig(file)
	if err != nil {
		return nil, err
	}
	caps := map[string]string{}
	for _, r := range cfg.Runners {
		caps[r.ID] = r.Capability
	}
	return caps, nil
}

// spawnOptions is what spawn runs on.
type spawnOptions struct {
	IO       *mcli.IOStreams
	JSON     bool
	Repo     func() (*gitstore.Repo, error)
	Store    func() (*ops.Flows, error)
	Runner   string
	Block    string
	Packet   string // a FILE, or - for stdin; "" to compose one from the store
	Ask      string
	OwnerURL string // "" to find the owner in .git/m1nd/serve.json
}

// newSpawnCmd parses spawn; a test's runF sees the options instead of
// running it.
func newSpawnCmd(inv *mcli.Invocation, runF func(context.Context, *spawnOptions) error) *cli.Command {
	return &cli.Command{
		Name:  "spawn",
		Usage: "hand a mission to a pinned build-runner (through the owner)",
		Description: `Asks the owner (m1nd serve) to hand a mission on the block to the runner;
the owner passes it to m1nd runnerd, the only process that spawns. Without
--packet m1nd composes the packet for the block from the brain store.`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "runner", Usage: "the pinned build-runner `ID` (required)"},
			&cli.StringFlag{Name: "block", Usage: "the block `ID` (required)"},
			&cli.StringFlag{Name: "packet", Usage: "mission packet markdown `FILE`"},
			&cli.StringFlag{Name: "ask", Usage: "what should change, for a composed packet"},
			&cli.StringFlag{Name: "owner-url", Usage: "the owner's `URL` (default: found in .git/m1nd/serve.json)"},
			mcli.JSONFlag,
		},
		Before: mcli.NoArgs,
		Action: func(c *cli.Context) error {
			if c.String("runner") == "" || c.String("block") == "" {
				return mcli.Usagef("spawn needs --runner ID and --block ID")
			}
			opts := &spawnOptions{IO: inv.IO(), JSON: c.Bool("json"), Repo: inv.OpenRepo, Store: inv.Flows, Runner: c.String("runner"),
				Block: c.String("block"), Packet: c.String("packet"), Ask: c.String("ask"), OwnerURL: c.String("owner-url")}
			return mcli.RunWith(c.Context, opts, runF, runSpawn)
		},
	}
}

// runSpawn asks the owner to hand the mission to the runner, with the
// packet given or one composed for the block.
func runSpawn(ctx context.Context, opts *spawnOptions) error {
	repo, err := opts.Repo()
	if err != nil {
		return err
	}
	owner, ok := trayclient.ClientFor(repo.RuntimeDir(), opts.OwnerURL)
	if !ok {
		return mcli.Usagef("no owner is running for this brain: start m1nd serve (or give --owner-url)")
	}
	packet := ""
	if path := opts.Packet; path != "" {
		b, err := mcli.ReadPacket(path, opts.IO.In)
		if err != nil {
			return err
		}
		packet = string(b)
	} else {
		s, err := opts.Store()
		if err != nil {
			return err
		}
		if packet, err = s.Packet(opts.Block, opts.Ask, opts.IO.Time()); err != nil {
			return err
		}
	}
	reply, err := owner.Spawn(ctx, wire.SpawnRequest{RunnerID: opts.Runner, BlockID: opts.Block, PacketMarkdown: packet})
	if err != nil {
		return err
	}
	if !reply.Accepted {
		data, _ := json.Marshal(reply)
		return fmt.Errorf("the owner answered without accepting: %s", data)
	}
	return opts.IO.Reply(opts.JSON, reply, func(w io.Writer) error {
		fmt.Fprintf(w, "runner %s accepted mission %s; watch it with m1nd mission log %s\n", reply.RunnerID, reply.MissionID, reply.MissionID)
		return nil
	})
}

// worktreesOptions is what worktrees and worktrees prune run on.
type worktreesOptions struct {
	IO       *mcli.IOStreams
	JSON     bool
	Repo     func() (*gitstore.Repo, error)
	Missions func() (*ops.Flows, error)
}

// newWorktreesCmd parses worktrees; a test's runF sees the options instead
// of running it. Its arguments are checked in the Action, not in Before,
// which a group runs before it looks for its subcommand.
func newWorktreesCmd(inv *mcli.Invocation, runF func(context.Context, *worktreesOptions) error) *cli.Command {
	return &cli.Command{
		Name:  "worktrees",
		Usage: "list mission worktrees with phase and disk use; prune the clean ones",
		Flags: []cli.Flag{mcli.JSONFlag},
		Action: func(c *cli.Context) error {
			if err := mcli.NoArgs(c); err != nil {
				return err
			}
			return mcli.RunWith(c.Context, &worktreesOptions{IO: inv.IO(), JSON: c.Bool("json"), Repo: inv.OpenRepo, Missions: inv.Flows}, runF, runWorktrees)
		},
		Subcommands: []*cli.Command{newWorktreesPruneCmd(inv, nil)},
	}
}

// open opens what the worktree verbs read: the repository, and where
// each mission stands.
func (o *worktreesOptions) open() (*gitstore.Repo, runnerd.Heads, error) {
	repo, err := o.Repo()
	if err != nil {
		return nil, nil, err
	}
	m, err := o.Missions()
	if err != nil {
		return nil, nil, err
	}
	return repo, m, nil
}

// runWorktrees lists the mission worktrees with their phase and disk use.
func runWorktrees(ctx context.Context, opts *worktreesOptions) error {
	repo, m, err := opts.open()
	if err != nil {
		return err
	}
	wts, err := runnerd.Worktrees(ctx, repo, m)
	if err != nil {
		return err
	}
	return opts.IO.Reply(opts.JSON, map[string]any{"worktrees": wts}, func(out io.Writer) error {
		if len(wts) == 0 {
			fmt.Fprintf(out, "no mission worktrees\n")
		}
		for _, w := range wts {
			state := "removed"
			if w.Present {
				state = "clean"
				if !w.Clean {
					state = "uncommitted changes"
				}
			}
			fmt.Fprintf(out, "%s  %-10s %-20s %s, %s, %d KB  %s\n", w.MissionID, w.Phase, state, w.Branch, rules.Count(w.Commits, "commit"), w.DiskBytes/1024, w.Path)
		}
		return nil
	})
}

// newWorktreesPruneCmd parses worktrees prune; a test's runF sees the
// options instead of running it.
func newWorktreesPruneCmd(inv *mcli.Invocation, runF func(context.Context, *worktreesOptions) error) *cli.Command {
	return &cli.Command{
		Name:  "prune",
		Usage: "remove the mission worktrees with nothing to lose; delete ended missions' merged branches",
		Description: `Removes each mission worktree that is clean (no uncommitted change) and not
in the middle of a run; the branch keeps its commits. For a mission that
ended (landed or archived), it then deletes the branch m1nd/<id> — but only
when the mission's target holds every commit of it and no worktree has it
checked out. Unmerged work is never deleted: such a branch is listed as
kept, with why. --json replies {ok, removed, branches_deleted,
branches_kept: [{mission_id, branch, why}]}.`,
		Flags: []cli.Flag{mcli.JSONFlag},
		Action: func(c *cli.Context) error {
			if err := mcli.NoArgs(c); err != nil {
				return err
			}
			return mcli.RunWith(c.Context, &worktreesOptions{IO: inv.IO(), JSON: c.Bool("json"), Repo: inv.OpenRepo, Missions: inv.Flows}, runF, runWorktreesPrune)
		},
	}
}

// runWorktreesPrune removes the clean worktrees and the ended missions'
// merged branches; unmerged work is kept and said so.
func runWorktreesPrune(ctx context.Context, opts *worktreesOptions) error {
	repo, m, err := opts.open()
	if err != nil {
		return err
	}
	pruned, err := runnerd.Prune(ctx, repo, m)
	if err != nil {
		return err
	}
	return opts.IO.Reply(opts.JSON, pruned, func(w io.Writer) error {
		fmt.Fprintf(w, "removed %s\n", rules.Count(len(pruned.Removed), "worktree"))
		mcli.PrintIDs(w, "  %s\n", pruned.Removed)
		if len(pruned.Deleted) > 0 {
			fmt.Fprintf(w, "deleted %s of ended missions, merged into their targets\n", rules.Count(len(pruned.Deleted), "branch"))
			mcli.PrintIDs(w, "  %s\n", pruned.Deleted)
		}
		for _, k := range pruned.Kept {
			fmt.Fprintf(w, "kept %s (%s): %s\n", k.Branch, k.MissionID, k.Why)
		}
		return nil
	})
}
