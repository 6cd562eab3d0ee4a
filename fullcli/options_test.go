package fullcli

import (
	"bytes"
	"context"
	"io"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/m1nd/m1nd/testkit/clitest"

	"github.com/urfave/cli/v2"

	mcli "github.com/m1nd/m1nd/cli"
	"github.com/m1nd/m1nd/internal/trayclient"
	"github.com/m1nd/m1nd/runnerd"
)

// parse runs the verb that newCmd builds on args through the whole
// command line (cli.Main), with a runF that only keeps the options: flag
// parsing without running the verb. It returns the options (nil when the
// verb did not run), the exit status and stderr.
func parse[O any](t *testing.T, newCmd func(*mcli.Invocation, func(context.Context, *O) error) *cli.Command, args ...string) (*O, int, string) {
	t.Helper()
	var errb bytes.Buffer
	streams := &mcli.IOStreams{In: strings.NewReader(""), Out: io.Discard, Err: &errb}
	var got *O
	name := newCmd(mcli.NewInvocation(streams, ""), nil).Name
	only := func(inv *mcli.Invocation) []*cli.Command {
		return []*cli.Command{newCmd(inv, func(_ context.Context, o *O) error { got = o; return nil })}
	}
	code := mcli.Main(context.Background(), append([]string{"m1nd", name}, args...), streams, only)
	if code == 0 && got == nil {
		t.Fatalf("%s %v: runF was not called", name, args)
	}
	if got != nil && reflect.ValueOf(got).Elem().FieldByName("IO").Interface() != streams {
		t.Fatalf("%s %v: the options do not carry the invocation's streams", name, args)
	}
	return got, code, errb.String()
}

// parseCase is one command line and the options it should parse into, or
// the usage error it should give (exit 2, without running).
type parseCase[O any] struct {
	args  []string
	want  O
	usage string // when set, a usage error containing this
}

func checkParse[O any](t *testing.T, newCmd func(*mcli.Invocation, func(context.Context, *O) error) *cli.Command, cases []parseCase[O]) {
	t.Helper()
	for _, tc := range cases {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			got, code, stderr := parse(t, newCmd, tc.args...)
			if tc.usage != "" {
				if code != 2 || !strings.Contains(stderr, tc.usage) {
					t.Fatalf("exit %d, stderr %q; want a usage error (2) containing %q", code, stderr, tc.usage)
				}
				if got != nil {
					t.Fatalf("runF ran on a usage error: %+v", clitest.Plain(got))
				}
				return
			}
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			if p := clitest.Plain(got); !reflect.DeepEqual(p, tc.want) {
				t.Fatalf("options\n got %+v\nwant %+v", p, tc.want)
			}
		})
	}
}

func TestParseStatus(t *testing.T) {
	checkParse(t, newStatusCmd, []parseCase[statusOptions]{
		{args: []string{}, want: statusOptions{}},
		{args: []string{"x"}, usage: "unexpected argument"},
	})
}

func TestParseHookInstall(t *testing.T) {
	install := func(inv *mcli.Invocation, runF func(context.Context, *hookInstallOptions) error) *cli.Command {
		return hookInstallCommand(inv, true, runF)
	}
	uninstall := func(inv *mcli.Invocation, runF func(context.Context, *hookInstallOptions) error) *cli.Command {
		return hookInstallCommand(inv, false, runF)
	}
	checkParse(t, install, []parseCase[hookInstallOptions]{
		{args: []string{"claude"}, want: hookInstallOptions{Install: true, Host: "claude"}},
		{args: []string{"codex", "--user", "--allow-auto-compact", "--json"}, want: hookInstallOptions{JSON: true, Install: true, Host: "codex", User: true, AllowAutoCompact: true}},
		{args: []string{"vim"}, usage: `unknown host "vim"`},
		{args: []string{}, usage: "missing host"},
	})
	checkParse(t, uninstall, []parseCase[hookInstallOptions]{
		{args: []string{"claude", "--user"}, want: hookInstallOptions{Host: "claude", User: true}},
	})
}

func TestParseRunnerdSpawnAndWorktrees(t *testing.T) {
	checkParse(t, newRunnerdCmd, []parseCase[runnerdOptions]{
		{args: []string{}, want: runnerdOptions{Addr: runnerd.DefaultAddr, Announce: runnerd.AnnounceInterval, QueueInterval: runnerd.QueueInterval}},
		{args: []string{"--config", "r.toml", "--addr", "127.0.0.1:0", "--owner-url", "http://127.0.0.1:9/", "--announce-interval", "1s", "--queue-interval", "0"},
			want: runnerdOptions{Config: "r.toml", Addr: "127.0.0.1:0", OwnerURL: "http://127.0.0.1:9/", Announce: time.Second}},
		{args: []string{"stray"}, usage: `unexpected argument "stray"`},
		{args: []string{"--queue-interval", "often"}, usage: "invalid value"},
	})
	checkParse(t, newSpawnCmd, []parseCase[spawnOptions]{
		{args: []string{"--runner", "build-1", "--block", "sb_x"}, want: spawnOptions{Runner: "build-1", Block: "sb_x"}},
		{args: []string{"--runner", "build-1", "--block", "sb_x", "--packet", "p.md", "--ask", "faster", "--owner-url", "http://h/", "--json"},
			want: spawnOptions{JSON: true, Runner: "build-1", Block: "sb_x", Packet: "p.md", Ask: "faster", OwnerURL: "http://h/"}},
		{args: []string{"--block", "sb_x"}, usage: "spawn needs --runner ID and --block ID"},
		{args: []string{"--runner", "build-1"}, usage: "spawn needs --runner ID and --block ID"},
		{args: []string{"stray"}, usage: `unexpected argument "stray"`},
	})
	checkParse(t, newWorktreesCmd, []parseCase[worktreesOptions]{
		{args: []string{}, want: worktreesOptions{}},
		{args: []string{"--json"}, want: worktreesOptions{JSON: true}},
		{args: []string{"stray"}, usage: `unexpected argument "stray"`},
	})
	checkParse(t, newWorktreesPruneCmd, []parseCase[worktreesOptions]{
		{args: []string{}, want: worktreesOptions{}},
		{args: []string{"--json"}, want: worktreesOptions{JSON: true}},
		{args: []string{"stray"}, usage: `unexpected argument "stray"`},
	})
}

func TestParseServeAndDemo(t *testing.T) {
	checkParse(t, newServeCmd, []parseCase[serveOptions]{
		{args: []string{}, want: serveOptions{Addr: trayclient.DefaultAddr}},
		{args: []string{"--addr", "127.0.0.1:0", "--read-only", "--open"}, want: serveOptions{Addr: "127.0.0.1:0", ReadOnly: true, Open: true}},
		{args: []string{"stray"}, usage: `unexpected argument "stray"`},
	})
	checkParse(t, newDemoCmd, []parseCase[demoOptions]{
		{args: []string{}, want: demoOptions{Addr: trayclient.DefaultAddr}},
		{args: []string{"d"}, want: demoOptions{Dir: "d", Addr: trayclient.DefaultAddr}},
		{args: []string{"--dir", "d", "--addr", "127.0.0.1:0", "--no-serve", "--open", "--json"},
			want: demoOptions{JSON: true, Dir: "d", Addr: "127.0.0.1:0", AddrSet: true, NoServe: true, Open: true}},
		{args: []string{"--dir", "d", "e"}, usage: "name the folder once"},
		{args: []string{"d", "e"}, usage: "name the folder once"},
	})
}
