package cli

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/m1nd/m1nd/brain"
	"github.com/m1nd/m1nd/gitstore"
	"github.com/m1nd/m1nd/rules"
)

func brainCommand(inv *Invocation) *cli.Command {
	return &cli.Command{
		Name:  "brain",
		Usage: "the brain's name: show it, or rename it",
		Description: `m1nd init registers the brain's name in refs/m1nd/brain (git config
m1nd.brain, else the main worktree's folder), or, in a clone whose remote
holds a registration, adopts the remote's: every clone of a brain carries
one name, whatever its folder is called, and sync carries it. A git config
naming another brain is refused brain_mismatch.

A brain made before registrations is named as before: git config, else its
folder, fixed once it has missions (every letter carries it in brain_ref).`,
		Subcommands: []*cli.Command{
			newBrainShowCmd(inv, nil),
			newBrainRenameCmd(inv, nil),
			newBrainKeysCmd(inv, nil),
		},
	}
}

// brainShowOptions is what brain show runs on.
type brainShowOptions struct {
	IO   *IOStreams
	JSON bool
	Repo func() (*gitstore.Repo, error)
}

// newBrainShowCmd parses brain show; a test's runF sees the options
// instead of running it.
func newBrainShowCmd(inv *Invocation, runF func(context.Context, *brainShowOptions) error) *cli.Command {
	return &cli.Command{
		Name:      "show",
		Usage:     "print the brain's name and where it comes from",
		ArgsUsage: " ",
		Flags:     []cli.Flag{JSONFlag},
		Action: func(c *cli.Context) error {
			return RunWith(c.Context, &brainShowOptions{IO: inv.io, JSON: c.Bool("json"), Repo: inv.OpenRepo}, runF, runBrainShow)
		},
	}
}

// brainKeysOptions is what brain keys runs on.
type brainKeysOptions struct {
	IO   *IOStreams
	JSON bool
	Repo func() (*gitstore.Repo, error)
}

// newBrainKeysCmd parses brain keys; a test's runF sees the options
// instead of running it.
func newBrainKeysCmd(inv *Invocation, runF func(context.Context, *brainKeysOptions) error) *cli.Command {
	return &cli.Command{
		Name:  "keys",
		Usage: "list the brain's passkeys, and the fingerprint that names them",
		Description: `The passkeys in refs/m1nd/keys (registered and changed in the tray) with
their fingerprints, and the fingerprint of the brain's first key set, which
names them all (each later key was signed in by one before it): it is what
a remote's admin trusts (m1nd hooks install --bare --trust-key FINGERPRINT)
and what a newcomer's first sync asks for (m1nd sync --trust FINGERPRINT).`,
		Flags:  []cli.Flag{JSONFlag},
		Before: NoArgs,
		Action: func(c *cli.Context) error {
			return RunWith(c.Context, &brainKeysOptions{IO: inv.io, JSON: c.Bool("json"), Repo: inv.OpenRepo}, runF, runBrainKeys)
		},
	}
}

// keyView is one passkey as brain keys lists it.
type keyView struct {
	Label        string `json:"label"`
	Fingerprint  string `json:"fingerprint"`
	CredentialID string `json:"credential_id"`
	AddedAt      string `json:"added_at"`
}

// brainKeysReply is what brain keys answers: no fingerprint and no first
// key when the brain has no passkey yet.
type brainKeysReply struct {
	Fingerprint string    `json:"fingerprint,omitempty"` // the first key set's: what --trust-key and --trust name
	First       *keyView  `json:"first,omitempty"`       // the first set's key
	Keys        []keyView `json:"keys"`
	Version     int64     `json:"version,omitempty"`
}

func viewKey(p brain.Passkey) keyView {
	return keyView{Label: p.Label, Fingerprint: p.Fingerprint(), CredentialID: p.CredentialID, AddedAt: p.AddedAt}
}

// runBrainKeys lists the brain's passkeys, its first key first.
func runBrainKeys(_ context.Context, opts *brainKeysOptions) error {
	repo, err := opts.Repo()
	if err != nil {
		return err
	}
	reply := brainKeysReply{Keys: []keyView{}}
	head, ok, err := repo.ReadRef(brain.KeysRef)
	if err != nil {
		return err
	}
	if ok {
		firstSet, err := brain.FirstSet(repo, head)
		if err != nil {
			return err
		}
		first := firstSet.Keys[0]
		reply.Fingerprint = firstSet.Fingerprint()
		set, err := brain.ReadKeys(repo, head)
		if err != nil {
			return err
		}
		fv := viewKey(first)
		reply.First, reply.Version = &fv, set.Version
		for _, k := range set.Keys {
			reply.Keys = append(reply.Keys, viewKey(k))
		}
	}
	return opts.IO.Reply(opts.JSON, reply, func(w io.Writer) error {
		if reply.First == nil {
			fmt.Fprintf(w, "no passkey yet: register the first in the tray (m1nd serve prints its one-time code)\n")
			return nil
		}
		fmt.Fprintf(w, "key set    %s  names the brain's keys: hooks install --bare --trust-key, sync --trust\n", reply.Fingerprint)
		fmt.Fprintf(w, "first key  %s  %s\n", reply.First.Fingerprint, rules.Echo(reply.First.Label))
		for _, k := range reply.Keys {
			fmt.Fprintf(w, "key        %s  %s, added %s\n", k.Fingerprint, rules.Echo(k.Label), k.AddedAt)
		}
		return nil
	})
}

// brainRenameOptions is what brain rename runs on.
type brainRenameOptions struct {
	IO   *IOStreams
	JSON bool
	Repo func() (*gitstore.Repo, error)
	Name string
}

// newBrainRenameCmd parses brain rename; a test's runF sees the options
// instead of running it.
func newBrainRenameCmd(inv *Invocation, runF func(context.Context, *brainRenameOptions) error) *cli.Command {
	return &cli.Command{
		Name:      "rename",
		Usage:     "rename the brain (a registered brain: a human gesture, asked at a terminal)",
		ArgsUsage: "NAME",
		Description: `A registered brain is renamed in refs/m1nd/brain, a human gesture asked at a
terminal: the registration keeps every earlier name, letters that carry one
stay the brain's, and every new letter carries NAME (every clone, after its
next sync). The laws refuse a rename written past m1nd.

A brain with no registration is renamed by git config m1nd.brain while it
has no missions; once it has some its name is fixed and rename is refused
invalid_transition.`,
		Flags: []cli.Flag{JSONFlag},
		Action: func(c *cli.Context) error {
			name, err := OneArg(c, "the new name")
			if err != nil {
				return err
			}
			return RunWith(c.Context, &brainRenameOptions{IO: inv.io, JSON: c.Bool("json"), Repo: inv.OpenRepo, Name: name}, runF, runBrainRename)
		},
	}
}

// brainReply is what brain show and brain rename answer.
type brainReply struct {
	Brain string   `json:"brain"`
	Fixed bool     `json:"fixed"`           // its missions carry the name, or refs/m1nd/brain registers it
	Names []string `json:"names,omitempty"` // every name it was registered under, oldest first
}

// runBrainShow says the brain's name and whether it is fixed yet.
func runBrainShow(_ context.Context, opts *brainShowOptions) error {
	repo, err := opts.Repo()
	if err != nil {
		return err
	}
	name, err := brain.DisplayName(repo)
	if err != nil {
		return err
	}
	_, fixed, err := brain.FixedName(repo)
	if err != nil {
		return err
	}
	reg, registered, err := brain.Registered(repo)
	if err != nil {
		return err
	}
	reply := brainReply{Brain: name, Fixed: fixed || registered}
	if registered {
		reply.Names = reg.Names
	}
	return opts.IO.Reply(opts.JSON, reply, func(w io.Writer) error {
		how := "not fixed yet: no missions (m1nd brain rename NAME changes it)"
		switch {
		case registered && len(reg.Names) > 1:
			how = fmt.Sprintf("registered in refs/m1nd/brain, earlier %s; every clone names it so", strings.Join(reg.Names[:len(reg.Names)-1], ", "))
		case registered:
			how = "registered in refs/m1nd/brain: every clone names it so"
		case fixed:
			how = "fixed: its missions carry it"
		}
		fmt.Fprintf(w, "brain %s (%s)\n", name, how)
		return nil
	})
}

// runBrainRename renames a registered brain by gesture, an unregistered
// one by git config while it has no missions.
func runBrainRename(ctx context.Context, opts *brainRenameOptions) error {
	repo, err := opts.Repo()
	if err != nil {
		return err
	}
	name := opts.Name
	if problem := rules.DisplayNameProblem(name); problem != "" {
		return Usagef("%q cannot name a brain: %s", name, problem)
	}
	if _, registered, err := brain.Registered(repo); err != nil {
		return err
	} else if registered {
		return renameRegistered(ctx, opts, repo)
	}
	if fixed, ok, err := brain.FixedName(repo); err != nil {
		return err
	} else if ok {
		return rules.Refusef(rules.InvalidTransition, "brain", "brain %q has missions, and every letter carries its name: it cannot be renamed; a brain named %s is a new repository", fixed, rules.Echo(name))
	}
	if _, err := gitstore.Git(ctx, repo.CommandDir(), "config", "m1nd.brain", name); err != nil {
		return err
	}
	return opts.IO.Reply(opts.JSON, brainReply{Brain: name}, func(w io.Writer) error {
		fmt.Fprintf(w, "brain renamed %s (git config m1nd.brain)\n", name)
		return nil
	})
}

// renameRegistered renames a registered brain: a human gesture, asked at a
// terminal (signed in the tray once the brain has a passkey). Every clone
// takes the new name at its next sync, and letters carrying an earlier
// name stay the brain's.
func renameRegistered(ctx context.Context, opts *brainRenameOptions, repo *gitstore.Repo) error {
	name := opts.Name
	p, next, err := brain.PrepareRename(repo, name, opts.IO.Time())
	if err != nil {
		return err
	}
	prev := next.Names[len(next.Names)-2]
	origin, err := opts.IO.Gesture(func(g string) error { return brain.TerminalGesture(repo, g) }, rules.GestureRename,
		fmt.Sprintf("Rename brain %s to %s: every new letter, in every clone after its next sync, carries %s; letters that carry %s stay the brain's.", prev, name, name, prev),
		"new name", name)
	if err != nil {
		return err
	}
	if origin == "" {
		return rules.Refusef(rules.HumanGestureRequired, "origin", "renaming a registered brain is a human gesture: run m1nd brain rename %s at a terminal", name)
	}
	if _, err := (&brain.Store{Repo: repo, Brain: prev}).CommitRename(ctx, p, origin, nil); err != nil {
		return err
	}
	// A git config m1nd.brain naming the old name would now contradict the
	// registration, and every verb after would be refused brain_mismatch.
	if configured, ok := repo.ConfigValue("m1nd", "brain"); ok && strings.TrimSpace(configured) != name {
		if _, err := gitstore.Git(ctx, repo.CommandDir(), "config", "m1nd.brain", name); err != nil {
			return fmt.Errorf("brain renamed %s, but git config m1nd.brain still says %s: %w (set it: git config m1nd.brain %s)", name, configured, err, name)
		}
	}
	return opts.IO.Reply(opts.JSON, brainReply{Brain: name, Fixed: true}, func(w io.Writer) error {
		fmt.Fprintf(w, "brain renamed %s (refs/m1nd/brain; it was %s): sync to carry the name to every clone\n", name, prev)
		return nil
	})
}
