package cli

import (
	"bufio"
	"context"
	"fmt"
	"io"

	"github.com/urfave/cli/v2"

	"github.com/m1nd/m1nd/brain"
	"github.com/m1nd/m1nd/chain"
	"github.com/m1nd/m1nd/gitstore"
	"github.com/m1nd/m1nd/gitsync"
	"github.com/m1nd/m1nd/rules"
)

// syncOptions is what sync runs on.
type syncOptions struct {
	IO     *IOStreams
	JSON   bool
	Repo   func() (*gitstore.Repo, error)
	Remote string
	Repair string // a ref to replace on the remote with this clone's history
	Trust  string // the first key set's fingerprint to take a remote's keys from, as typed
}

func newSyncCmd(inv *Invocation, runF func(context.Context, *syncOptions) error) *cli.Command {
	return &cli.Command{
		Name:      "sync",
		Usage:     "share refs/m1nd/ with a git remote: fetch, fast-forward, push, park what lost a race",
		ArgsUsage: "[REMOTE]",
		Description: `Fetches the remote's refs/m1nd/* into refs/m1nd-sync/REMOTE/*, then per ref:
takes what is new on the remote (after checking every new link), pushes what is
new here (creations and fast-forwards only, never forced: a ref the remote moved
meanwhile is refused, not overwritten) in one atomic push, and when a mission (or
the store) was extended on both sides keeps the remote's chain and parks the local
letters after the fork under refs/m1nd/conflicts/ — reported as stale_head
with what to re-post. Nothing accepted locally is dropped. Everything taken and
everything pushed is judged by the laws first, against the keys this clone
trusts: remote history that breaks them is "refused from", local history that
breaks them (written past the hook) is "not pushed". A key set on the remote
that does not extend this clone's is refused and reported, never adopted. Put
the laws on the remote too: 'm1nd hooks install --bare' in the bare repository.

A clone that holds no passkey yet never takes a remote's in silence, as ssh
never takes a host key: at a terminal sync shows the remote's keys (the
fingerprint of their first key set names them all) and asks; elsewhere it
holds them until --trust 'abcd 0123 4567 89ef' names that set. Compare it with
whoever registered the first key first: 'm1nd brain keys' shows it.

Pushes go in batches of at most 500 refs, with a progress line for each on
stderr: a forge runs its hook once per pushed ref, and one request for
thousands outlives a proxy's timeout. A batch the server or a proxy cuts short
is named as such; what earlier batches pushed stays pushed.

What a sync holds back (refused from the remote, or not pushed) is listed by
every sync and by m1nd status until a sync finds it resolved. A remote with no
m1nd hook (a forge where none can be installed) can take a raw push that breaks
the laws; every honest clone then refuses that ref. --repair REF replaces it on
the remote with this clone's history: a push with a lease on the value just
fetched, refused when the remote's history keeps the laws (sync takes or parks
it), when this clone's does not, and for refs/m1nd/keys.`,
		Flags: []cli.Flag{JSONFlag,
			&cli.StringFlag{Name: "repair", Usage: "replace the remote's `REF`, whose history breaks the laws or rewrites this clone's, with this clone's"},
			&cli.StringFlag{Name: "trust", Usage: "take the remote's passkeys when their first key set has this `FINGERPRINT` (this clone holds none yet)"}},
		Action: func(c *cli.Context) error {
			if c.NArg() > 1 {
				return Usagef("too many arguments: want at most one REMOTE")
			}
			remote := c.Args().First()
			if remote == "" {
				remote = "origin"
			}
			if !gitsync.ValidRemote(remote) {
				return Usagef("%q is not a remote name (git remote -v lists them)", remote)
			}
			if ref := c.String("repair"); ref != "" && !gitsync.ValidRepairRef(ref) {
				return Usagef("--repair %s: name one ref under refs/m1nd/ (not a parked conflict), as sync lists it", rules.Echo(ref))
			}
			opts := &syncOptions{IO: inv.io, JSON: c.Bool("json"), Repo: inv.OpenRepo, Remote: remote, Repair: c.String("repair"), Trust: c.String("trust")}
			return RunWith(c.Context, opts, runF, runSync)
		},
	}
}

// runSync syncs refs/m1nd/ with the remote; anything parked or refused
// exits 3 after the report.
func runSync(ctx context.Context, opts *syncOptions) error {
	repo, err := opts.Repo()
	if err != nil {
		return err
	}
	remote := opts.Remote
	if opts.Repair != "" {
		fixed, err := gitsync.Repair(ctx, repo, remote, opts.Repair)
		if err != nil {
			return err
		}
		return opts.IO.Reply(opts.JSON, fixed, func(w io.Writer) error {
			fmt.Fprintf(w, "repaired %s on %s: %s replaced by this clone's %s\n", fixed.Ref, remote, fixed.Was[:12], fixed.Now[:12])
			return nil
		})
	}
	run := gitsync.Options{Progress: opts.IO.Err, Kinds: opts.IO.Kinds}
	if opts.Trust != "" {
		if run.Trust, err = brain.ParseFingerprint(opts.Trust); err != nil {
			return Usagef("--trust: %v", err)
		}
	}
	if opts.IO.interactive() && !opts.JSON {
		run.Ask = opts.IO.askTrust
	}
	rep, err := gitsync.Sync(ctx, repo, remote, run)
	if err != nil {
		return err
	}
	err = opts.IO.Reply(opts.JSON, rep, func(w io.Writer) error {
		printSync(w, remote, rep)
		return nil
	})
	if err != nil {
		return err
	}
	if !rep.OK {
		return exitStatus(exitRefused)
	}
	return nil
}

// printSync says what a sync with remote did, and what it refused, held
// or left for another run.
func printSync(w io.Writer, remote string, rep *gitsync.Report) {
	fmt.Fprintf(w, "sync with %s: %d unchanged, %s fast-forwarded, %s created, %s pushed\n", remote, rep.Unchanged,
		rules.Count(len(rep.FastForwarded), "ref"), rules.Count(len(rep.Created), "ref"), rules.Count(len(rep.Pushed), "ref"))
	if len(rep.Folded) > 0 || len(rep.RemoteFolded) > 0 {
		fmt.Fprintf(w, "folded missions (%s): removed %s here and %s on %s\n", chain.ArchiveRef, rules.Count(len(rep.Folded), "live ref"), rules.Count(len(rep.RemoteFolded), "live ref"), remote)
	}
	for _, c := range rep.Conflicts {
		fmt.Fprintf(w, "stale_head: %s\n", c.Lesson)
	}
	for _, f := range rep.RefusedRemote {
		fmt.Fprintf(w, "refused from %s: %s\n", remote, f.Error())
	}
	for _, f := range rep.RefusedLocal {
		fmt.Fprintf(w, "not pushed, it breaks the laws: %s\n", f.Error())
	}
	if n := len(rep.Held); n > 0 {
		fmt.Fprintf(w, "%s held back until resolved (m1nd status lists them; m1nd sync --repair REF replaces a remote ref whose history breaks the laws with this clone's)\n", rules.Count(n, "ref"))
	}
	switch {
	case rep.PushCutShort:
		fmt.Fprintf(w, "push cut short in batch %s (at most %d refs each): the server or a proxy in front of it timed out or hung up: %s\n"+
			"what earlier batches pushed stays pushed; run m1nd sync again for the rest, and if it recurs raise the proxy's timeout (nginx: proxy_read_timeout): a forge runs its hook once per pushed ref\n",
			rep.FailedBatch, gitsync.MaxBatch, rep.PushError)
	case rep.PushError != "" && rep.FailedBatch == "":
		fmt.Fprintf(w, "deleting the live refs of folded missions on %s was refused (one moved there, or its hook said no): %s\nrun m1nd sync again\n", remote, rep.PushError)
	case rep.PushError != "":
		fmt.Fprintf(w, "push refused in batch %s (the remote moved, or its hook said no): %s\nrun m1nd sync again\n", rep.FailedBatch, rep.PushError)
	}
}

// askTrust shows the person at the terminal a remote's passkeys, which
// this clone would take as its own (everything they sign is then a human
// gesture here), and asks for the first key set's fingerprint as whoever
// registered it reads it to them: typed whole, not a y.
func (s *IOStreams) askTrust(offer gitsync.KeysOffer) (bool, error) {
	fp := offer.First.Fingerprint()
	fmt.Fprintf(s.Err, "%s holds this brain's passkeys, and this clone holds none yet:\n", offer.Remote)
	fmt.Fprintf(s.Err, "  key set    %s  its first (each later key was signed in by one before it), with %s\n", fp, offer.First.Keys[0].Named())
	for _, k := range offer.Keys {
		fmt.Fprintf(s.Err, "  key now    %s\n", k.Named())
	}
	fmt.Fprintf(s.Err, "Whatever these keys sign counts as a human's gesture here. Type the key set's fingerprint as whoever registered\nthe first key reads it to you (m1nd brain keys) to trust them, or press Enter to hold them: ")
	line, _ := bufio.NewReader(s.In).ReadString('\n')
	typed, err := brain.ParseFingerprint(line)
	return err == nil && typed == fp, nil
}
