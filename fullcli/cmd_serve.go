package fullcli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"syscall"

	mcli "github.com/m1nd/m1nd/cli"
	"github.com/m1nd/m1nd/tray"

	"github.com/urfave/cli/v2"

	"github.com/m1nd/m1nd/gitstore"
	"github.com/m1nd/m1nd/internal/trayclient"
)

// serveOptions is what serve runs on.
type serveOptions struct {
	IO       *mcli.IOStreams
	Brain    func() (*gitstore.Repo, string, error)
	Addr     string
	ReadOnly bool
	Open     bool // open the tray in the default browser
}

// newServeCmd parses serve; a test's runF sees the options instead of
// starting the owner.
func newServeCmd(inv *mcli.Invocation, runF func(context.Context, *serveOptions) error) *cli.Command {
	return &cli.Command{
		Name:  "serve",
		Usage: "run the owner: the loopback API and the tray, the web view where a human lands work",
		Description: `Serves one brain on a loopback address only. The API answers JSON
(GET /api/mailbox?kind=mission, GET /api/system_blocks, GET /api/status,
POST /api/mission_post, /api/mission_new, /api/candidate_edit; the human
gestures POST /api/gesture/options and /api/gesture/commit, signed by the
brain's passkey; GET /api/passkeys, POST /api/passkey/options and
/api/passkey/register for the first key, with the one-time code printed
here (later keys are added and removed by the gesture "keys", signed by a
registered passkey; the last one stays); GET /api/session and POST
/api/session/options, /api/session/login, /api/session/logout, the human's
passkey login (once the brain has a key, gestures and the stream are that
session's: an hour, an HttpOnly SameSite=Strict cookie for this tray); and
GET /api/events, a stream of the refs/m1nd refs that moved — also when
plain git moved them). The tray is http://localhost:PORT (a passkey
needs a site name); it listens on loopback only, requests must name it, and
writes must be JSON from the tray's own page. --read-only refuses every
write (read_only_owner). The address and pid are recorded in
.git/m1nd/serve.json while it runs; a second m1nd serve on the same
repository is refused (exit 2) naming the running one, and a killed
owner's record is taken over. Runners pinned in .git/m1nd/runners.toml
while it runs are read within seconds (m1nd runnerd finds a started or
restarted owner by itself).`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "addr", Value: trayclient.DefaultAddr, Usage: "listen on loopback `HOST:PORT` (port 0 picks a free one)"},
			&cli.BoolFlag{Name: "read-only", Usage: "refuse every write"},
			&cli.BoolFlag{Name: "open", Usage: "open the tray in the default browser"},
		},
		Before: mcli.NoArgs,
		Action: func(c *cli.Context) error {
			opts := &serveOptions{IO: inv.IO(), Brain: inv.OpenBrain, Addr: c.String("addr"), ReadOnly: c.Bool("read-only"), Open: c.Bool("open")}
			return mcli.RunWith(c.Context, opts, runF, runServe)
		},
	}
}

// runServe listens on the loopback address and runs the owner there,
// unless another owner already runs for this repository.
func runServe(ctx context.Context, opts *serveOptions) error {
	repo, name, err := opts.Brain()
	if err != nil {
		return err
	}
	// Before binding: a second owner on the default address
	// would otherwise be told only that the address is in use.
	if rec, ok := trayclient.ReadRecord(repo.RuntimeDir()); ok && rec.Running() {
		return secondOwner(&trayclient.ErrRunning{Record: rec})
	}
	ln, err := trayclient.Listen(opts.Addr)
	if errors.Is(err, syscall.EADDRINUSE) {
		return mcli.Usagef("%s", portTaken(ctx, opts.Addr))
	}
	if err != nil {
		return mcli.Usagef("%v", err)
	}
	return runOwner(ctx, opts.IO, repo, name, ln, opts.ReadOnly, opts.Open)
}

// portTaken says who holds addr — the owner of which brain, when it is
// one — and how to serve this brain elsewhere.
func portTaken(ctx context.Context, addr string) string {
	who := "another program"
	if brain := trayclient.BrainAt(ctx, addr); brain != "" {
		who = fmt.Sprintf("the m1nd owner of brain %q (m1nd serve in another repository)", brain)
	}
	return fmt.Sprintf("%s is in use by %s: stop it, or serve this brain on another port with --addr 127.0.0.1:0 (any free one) or --addr 127.0.0.1:PORT", addr, who)
}

// runOwner runs the owner on ln until ctx ends (Ctrl-C).
func runOwner(ctx context.Context, streams *mcli.IOStreams, repo *gitstore.Repo, brainName string, ln net.Listener, readOnly, open bool) error {
	// The tray's URL names localhost where it can: browsers refuse an IP
	// address as the WebAuthn relying party, and the passkeys live there.
	host, port, _ := net.SplitHostPort(ln.Addr().String())
	url := trayclient.URL(host, port)
	removeRecord, err := trayclient.Claim(repo.RuntimeDir(), trayclient.Record{Addr: ln.Addr().String(), PID: os.Getpid(), Brain: brainName, ReadOnly: readOnly})
	var running *trayclient.ErrRunning
	if errors.As(err, &running) {
		ln.Close()
		return secondOwner(running)
	}
	if err != nil {
		ln.Close()
		return err
	}
	defer removeRecord()
	mode := ""
	if readOnly {
		mode = " (read-only)"
	}
	srv := tray.New(repo, brainName, readOnly)
	srv.Pins = loadPins(streams, repo)
	code, err := srv.OfferRegistration()
	if err != nil {
		ln.Close()
		return err
	}
	fmt.Fprintf(streams.Out, "m1nd owner for brain %s%s: %s\n(Ctrl-C stops it)\n", brainName, mode, url)
	if code != "" {
		fmt.Fprintf(streams.Out, "register a passkey in the tray with code %s (it works once, and only here)\n", code)
	}
	if open {
		if err := exec.Command("xdg-open", url).Start(); err != nil {
			fmt.Fprintf(streams.Err, "m1nd: could not open a browser (%v); open %s yourself\n", err, url)
		}
	}
	return srv.Serve(ctx, ln)
}

// secondOwner refuses to start an owner while another runs for the same
// repository: both would answer, runnerd would announce to one of them,
// and the first to stop would take the other's record with it.
func secondOwner(e *trayclient.ErrRunning) error {
	return mcli.Usagef("%v: use that one, or stop it (Ctrl-C in its terminal, or kill -INT %d) and start m1nd serve again", e, e.Record.PID)
}
