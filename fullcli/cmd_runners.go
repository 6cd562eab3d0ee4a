package fullcli

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	mcli "github.com/m1nd/m1nd/cli"
	"github.com/m1nd/m1nd/runners"

	"github.com/urfave/cli/v2"

	"github.com/m1nd/m1nd/brain"
	"github.com/m1nd/m1nd/ops"
	"github.com/m1nd/m1nd/rules"
)

func runnersCommand(inv *mcli.Invocation) *cli.Command {
	return &cli.Command{
		Name:  "runners",
		Usage: "the build runners' pins: what a human approved, and approving them",
		Description: `runnerd runs a build runner only as a human approved its pin (command, gate,
workspaces, setup, timeout, by hash) together with the public key of this
machine's runnerd, in refs/m1nd/pins; what its gate passes on, runnerd signs
with that key, and the laws take a runner's merge_wait only with that
signature. The tray's Runner pins panel approves them with your passkey;
while the brain has no passkey, m1nd runners approve does at a terminal.`,
		Subcommands: []*cli.Command{
			newRunnersShowCmd(inv, nil),
			newRunnersApproveCmd(inv, nil),
		},
	}
}

// runnersOptions is what runners show and runners approve run on.
type runnersOptions struct {
	IO    *mcli.IOStreams
	JSON  bool
	Flows func() (*ops.Flows, error)
}

// runnersView is `m1nd runners show --json`.
type runnersView struct {
	ApprovedVersion int64               `json:"approved_version"`
	Key             string              `json:"key"`
	Fingerprint     string              `json:"fingerprint"`
	Runners         []runners.PinStatus `json:"runners"`
}

// newRunnersShowCmd parses runners show; a test's runF sees the options
// instead of running it.
func newRunnersShowCmd(inv *mcli.Invocation, runF func(context.Context, *runnersOptions) error) *cli.Command {
	return &cli.Command{
		Name:   "show",
		Usage:  "list the build runners of runners.toml: approved, changed or new",
		Flags:  []cli.Flag{mcli.JSONFlag},
		Before: mcli.NoArgs,
		Action: func(c *cli.Context) error {
			return mcli.RunWith(c.Context, &runnersOptions{IO: inv.IO(), JSON: c.Bool("json"), Flows: inv.Flows}, runF, runRunnersShow)
		},
	}
}

// runnerPins reads runners.toml, the approved pins and this machine's
// runnerd key.
func runnerPins(b *ops.Flows) (*runners.Config, *brain.PinSet, string, error) {
	cfg, err := runners.LoadConfig(filepath.Join(b.RuntimeDir(), runners.ConfigFile))
	if err != nil {
		return nil, nil, "", mcli.Usagef("%v", err)
	}
	approved, err := b.ApprovedPins()
	if err != nil {
		return nil, nil, "", err
	}
	key, err := b.RunnerKey()
	if err != nil {
		return nil, nil, "", fmt.Errorf("runnerd's signing key: %w", err)
	}
	return cfg, approved, key, nil
}

func runRunnersShow(ctx context.Context, opts *runnersOptions) error {
	b, err := opts.Flows()
	if err != nil {
		return err
	}
	cfg, approved, key, err := runnerPins(b)
	if err != nil {
		return err
	}
	v := runnersView{Key: key, Fingerprint: rules.RunnerKeyFingerprint(key), Runners: runners.PinStatuses(cfg, approved, key)}
	if approved != nil {
		v.ApprovedVersion = approved.Version
	}
	return opts.IO.Reply(opts.JSON, v, func(w io.Writer) error {
		fmt.Fprintf(w, "runnerd key %s (signs what its gates test)\n", v.Fingerprint)
		if v.ApprovedVersion == 0 {
			fmt.Fprintln(w, "approved pins: none yet")
		} else {
			fmt.Fprintf(w, "approved pins: v%d\n", v.ApprovedVersion)
		}
		if len(v.Runners) == 0 {
			fmt.Fprintln(w, "no build runner is pinned in runners.toml")
		}
		for _, r := range v.Runners {
			fmt.Fprintf(w, "%-9s %-16s gate %q\n", r.State, r.ID, r.GateCommand)
		}
		for _, r := range v.Runners {
			if r.State != "approved" {
				fmt.Fprintln(w, "approve them in the tray's Runner pins (your passkey), or with m1nd runners approve at a terminal while the brain has no passkey")
				break
			}
		}
		return nil
	})
}

// newRunnersApproveCmd parses runners approve; a test's runF sees the
// options instead of running it.
func newRunnersApproveCmd(inv *mcli.Invocation, runF func(context.Context, *runnersOptions) error) *cli.Command {
	return &cli.Command{
		Name:  "approve",
		Usage: "approve the build runners' pins and runnerd's key (a human gesture, asked at a terminal)",
		Description: `Approves every build runner runners.toml pins now, with this machine's
runnerd key, as the next version of refs/m1nd/pins: a human gesture, asked at
an interactive terminal (type the runner ids to confirm) while the brain has
no passkey. Once it has one, approve them in the tray, signed by it.`,
		Flags:  []cli.Flag{mcli.JSONFlag},
		Before: mcli.NoArgs,
		Action: func(c *cli.Context) error {
			return mcli.RunWith(c.Context, &runnersOptions{IO: inv.IO(), JSON: c.Bool("json"), Flows: inv.Flows}, runF, runRunnersApprove)
		},
	}
}

func runRunnersApprove(ctx context.Context, opts *runnersOptions) error {
	b, err := opts.Flows()
	if err != nil {
		return err
	}
	if err := b.TerminalGesture(rules.GesturePins); err != nil {
		return err
	}
	if err := b.CheckSound(ctx, brain.PinsRef); err != nil {
		return err
	}
	cfg, _, key, err := runnerPins(b)
	if err != nil {
		return err
	}
	approvals, binds := runners.Approvals(cfg, key)
	if len(approvals) == 0 {
		return rules.Refusef(rules.UnpinnedRunner, "runners", "runners.toml pins no build runner: there is no gate to approve")
	}
	prepared, set, err := b.PreparePins(ctx, approvals, opts.IO.Time())
	if err != nil {
		return err
	}
	ids := make([]string, len(set.Runners))
	for i, r := range set.Runners {
		ids[i] = r.ID
	}
	prompt := fmt.Sprintf("Approve runner pins v%d?\n  %s", set.Version, strings.Join(binds, "\n  "))
	origin, err := opts.IO.Gesture(b.TerminalGesture, rules.GesturePins, prompt, "runner ids", strings.Join(ids, ","))
	if err != nil {
		return err
	}
	h, err := b.CommitPins(ctx, prepared, origin, nil)
	if err != nil {
		return err
	}
	reply := map[string]any{"pins_version": set.Version, "approved": ids, "commit": h.String(), "key": key}
	return opts.IO.Reply(opts.JSON, reply, func(w io.Writer) error {
		fmt.Fprintf(w, "approved runner pins v%d: %s, signed by runnerd key %s\n", set.Version, strings.Join(ids, ", "), rules.RunnerKeyFingerprint(key))
		return nil
	})
}
