package cli

import (
	"context"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/m1nd/m1nd/testkit/clitest"

	"github.com/urfave/cli/v2"

	"github.com/m1nd/m1nd/internal/runs"
	"github.com/m1nd/m1nd/session"
)

// parse runs the verb that newCmd builds on args, as Main would, with a
// runF that only keeps the options: flag parsing without running the verb.
func parse[O any](t *testing.T, newCmd func(*Invocation, func(context.Context, *O) error) *cli.Command, args ...string) (*O, error) {
	t.Helper()
	inv := &Invocation{io: &IOStreams{In: strings.NewReader(""), Out: io.Discard, Err: io.Discard}}
	var got *O
	cmd := newCmd(inv, func(_ context.Context, o *O) error { got = o; return nil })
	app := &cli.App{Name: "m1nd", Commands: []*cli.Command{cmd}, Writer: io.Discard, ErrWriter: io.Discard,
		ExitErrHandler: func(*cli.Context, error) {}}
	wireUsage(inv, app.Commands, "m1nd")
	err := app.Run(hoistFlags(app, append([]string{"m1nd", cmd.Name}, args...)))
	if err == nil && got == nil {
		t.Fatalf("%s %v: runF was not called", cmd.Name, args)
	}
	if got != nil && reflect.ValueOf(got).Elem().FieldByName("IO").Interface() != inv.io {
		t.Fatalf("%s %v: the options do not carry the Invocation's streams", cmd.Name, args)
	}
	return got, err
}

// parseCase is one command line and the options it should parse into, or
// the usage error it should give (without running).
type parseCase[O any] struct {
	args  []string
	want  O
	usage string // when set, a usage error containing this
}

func checkParse[O any](t *testing.T, newCmd func(*Invocation, func(context.Context, *O) error) *cli.Command, cases []parseCase[O]) {
	t.Helper()
	for _, tc := range cases {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			got, err := parse(t, newCmd, tc.args...)
			if tc.usage != "" {
				var u *usageError
				if !errors.As(err, &u) || !strings.Contains(u.msg, tc.usage) {
					t.Fatalf("error %v, want a usage error containing %q", err, tc.usage)
				}
				if got != nil {
					t.Fatalf("runF ran on a usage error: %+v", clitest.Plain(got))
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if p := clitest.Plain(got); !reflect.DeepEqual(p, tc.want) {
				t.Fatalf("options\n got %+v\nwant %+v", p, tc.want)
			}
		})
	}
}

const msn = "msn_0123456789ab"

func TestParseMissionNew(t *testing.T) {
	checkParse(t, newMissionNewCmd, []parseCase[missionNewOptions]{
		{args: []string{"--block", "sb_x"}, want: missionNewOptions{Block: "sb_x", Seat: "hand", Capability: "hand-runner"}},
		{args: []string{"--block", "sb_x", "--json", "--seat", "oracle", "--capability", "build-runner", "--runner", "r1",
			"--packet", "p.md", "--synthetic", "--deliver-to", "a2", "--followup", "fu_1"},
			want: missionNewOptions{JSON: true, Block: "sb_x", Seat: "oracle", Capability: "build-runner", Runner: "r1",
				Packet: "p.md", Synthetic: true, DeliverTo: "a2", Followup: "fu_1"}},
		{args: []string{}, usage: "missing --block"},
		{args: []string{"--block", "sb_x", "extra"}, usage: `unexpected argument "extra"`},
		{args: []string{"--nope"}, usage: "unknown flag --nope"},
	})
}

func TestParseMissionPost(t *testing.T) {
	checkParse(t, newMissionPostCmd, []parseCase[missionPostOptions]{
		{args: []string{}, want: missionPostOptions{}},
		{args: []string{"-"}, want: missionPostOptions{Letter: "-"}},
		{args: []string{"letter.json", "--agent", "a2"}, want: missionPostOptions{Letter: "letter.json"}},
		{args: []string{"a", "b"}, usage: "too many arguments"},
	})
}

func TestParseMissionNextAndArchive(t *testing.T) {
	checkParse(t, newMissionNextCmd, []parseCase[missionNextOptions]{
		{args: []string{msn}, want: missionNextOptions{MissionID: msn}},
		{args: []string{msn, "--phase", "executing"}, want: missionNextOptions{MissionID: msn, Phase: "executing"}},
		{args: []string{msn, "--phase", "nowhere"}, usage: `--phase "nowhere"`},
		{args: []string{"msn_nope"}, usage: "is not a mission id"},
		{args: []string{}, usage: "missing mission id"},
	})
	checkParse(t, newMissionArchiveCmd, []parseCase[missionArchiveOptions]{
		{args: []string{msn}, want: missionArchiveOptions{MissionID: msn}},
		{args: []string{msn, "--json"}, want: missionArchiveOptions{JSON: true, MissionID: msn}},
		{args: []string{msn, msn}, usage: "too many arguments"},
	})
}

func TestParseSkeletonEditAndReceiptImport(t *testing.T) {
	checkParse(t, newSkeletonEditCmd, []parseCase[skeletonEditOptions]{
		{args: []string{"--expected-store-version", "3", "ops.json"}, want: skeletonEditOptions{ExpectedStoreVersion: 3, Seat: "owner", Ops: "ops.json"}},
		{args: []string{"--expected-store-version", "0", "--seat", "runner", "--json"}, want: skeletonEditOptions{JSON: true, Seat: "runner"}},
		{args: []string{"ops.json"}, usage: "missing --expected-store-version"},
		{args: []string{"--expected-store-version", "1", "--seat", "oracle"}, usage: `--seat "oracle"`},
		{args: []string{"--expected-store-version", "1", "a", "b"}, usage: "too many arguments"},
	})
	checkParse(t, newReceiptImportCmd, []parseCase[receiptImportOptions]{
		{args: []string{"--expected-store-version", "2", "--block", "sb_x", "r.json"},
			want: receiptImportOptions{ExpectedStoreVersion: 2, Block: "sb_x", Receipt: "r.json"}},
		{args: []string{"--expected-store-version", "2", "--block", "sb_x", "-"}, usage: "the receipt comes from a file"},
		{args: []string{"--expected-store-version", "2", "r.json"}, usage: "missing --block"},
		{args: []string{"--block", "sb_x", "r.json"}, usage: "missing --expected-store-version"},
		{args: []string{}, usage: "missing receipt file"},
	})
}

func TestParseMailAndMemory(t *testing.T) {
	checkParse(t, newMailSendCmd, []parseCase[mailSendOptions]{
		{args: []string{"--to", "a2", "--what", "hi"}, want: mailSendOptions{To: "a2", Class: "note", What: "hi"}},
		{args: []string{"--to", "all", "--what", "hi", "--class", "ask", "--expected", "yes", "--snippet", "s", "--tool", "go",
			"--answers", "abc", "--answers", "def", "--json"},
			want: mailSendOptions{JSON: true, To: "all", Class: "ask", What: "hi", Expected: "yes", Snippet: "s", Tool: "go", Answers: []string{"abc", "def"}}},
		{args: []string{"--to", "a2"}, usage: "mail send needs --to"},
	})
	checkParse(t, newMemoryAddCmd, []parseCase[memoryAddOptions]{
		{args: []string{"--sort", "learned", "the text"}, want: memoryAddOptions{Sort: "learned", Text: "the text"}},
		{args: []string{"the text", "--sort", "decided", "--about", "sb_x", "--source", "m1", "--private", "--supersedes", "mem_1", "--json"},
			want: memoryAddOptions{JSON: true, Sort: "decided", Text: "the text", About: []string{"sb_x"}, Source: []string{"m1"}, Private: true, Supersedes: "mem_1"}},
		{args: []string{"the text"}, usage: "missing --sort"},
		{args: []string{"--sort", "learned"}, usage: "missing memory text"},
	})
	checkParse(t, newMemoryRecallCmd, []parseCase[memoryRecallOptions]{
		{args: []string{}, want: memoryRecallOptions{Limit: 20, MaxBytes: 4096}},
		{args: []string{"--about", "sb_x", "--sort", "learned", "--query", "q", "--limit", "3", "--max-bytes", "10", "--json"},
			want: memoryRecallOptions{JSON: true, About: "sb_x", Sort: "learned", Query: "q", Limit: 3, MaxBytes: 10}},
		{args: []string{"stray"}, usage: "unexpected argument"},
	})
}

func TestParseRepoVerbs(t *testing.T) {
	checkParse(t, newSyncCmd, []parseCase[syncOptions]{
		{args: []string{}, want: syncOptions{Remote: "origin"}},
		{args: []string{"upstream", "--json"}, want: syncOptions{JSON: true, Remote: "upstream"}},
		{args: []string{"not a remote"}, usage: "is not a remote name"},
		{args: []string{"a", "b"}, usage: "want at most one REMOTE"},
	})
	checkParse(t, newVerifyCmd, []parseCase[verifyOptions]{
		{args: []string{"--json"}, want: verifyOptions{JSON: true}},
		{args: []string{"x"}, usage: "unexpected argument"},
	})
	checkParse(t, newInitCmd, []parseCase[initOptions]{
		{args: []string{"--json"}, want: initOptions{JSON: true}},
		{args: []string{"x"}, usage: "unexpected argument"},
	})
}

// TestParseDefersTheAgent checks that a bad --agent is found when the verb
// runs, not while its flags are parsed.
func TestParseDefersTheAgent(t *testing.T) {
	got, err := parse(t, newMailSendCmd, "--to", "a2", "--what", "hi", "--agent", "Not Valid")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := got.Agent(); err == nil || !strings.Contains(err.Error(), `agent id "Not Valid" (from --agent) is not valid`) {
		t.Fatalf("Agent(): %v", err)
	}
	got, err = parse(t, newMailSendCmd, "--to", "a2", "--what", "hi", "--agent", "a7")
	if err != nil {
		t.Fatal(err)
	}
	if a, err := got.Agent(); a != "a7" || err != nil {
		t.Fatalf("Agent() = %q, %v", a, err)
	}
}

func TestParseFollowupAndAtlas(t *testing.T) {
	checkParse(t, newFollowupOpenCmd, []parseCase[followupOpenOptions]{
		{args: []string{"--owner", "b2", "name the port"}, want: followupOpenOptions{Owner: "b2", Brief: "name the port"}},
		{args: []string{"--owner", "b2", "--mission", msn, "brief", "--json"}, want: followupOpenOptions{JSON: true, Owner: "b2", Mission: msn, Brief: "brief"}},
		{args: []string{"brief"}, usage: "missing --owner"},
		{args: []string{"--owner", "b2"}, usage: "missing brief"},
	})
	checkParse(t, newFollowupResolveCmd, []parseCase[followupResolveOptions]{
		{args: []string{"fu_1", "--recorded", "7420"}, want: followupResolveOptions{ID: "fu_1", As: "recorded", Text: "7420"}},
		{args: []string{"fu_1", "--withdrawn", "moot", "--json"}, want: followupResolveOptions{JSON: true, ID: "fu_1", As: "withdrawn", Text: "moot"}},
		{args: []string{"fu_1"}, usage: "exactly one of --recorded RESULT or --withdrawn WHY"},
		{args: []string{"fu_1", "--recorded", "a", "--withdrawn", "b"}, usage: "exactly one of"},
	})
	checkParse(t, newFollowupListCmd, []parseCase[followupListOptions]{
		{args: []string{}, want: followupListOptions{}},
		{args: []string{"--owner", "b2", "--open", "--json"}, want: followupListOptions{JSON: true, Owner: "b2", Open: true}},
		{args: []string{"stray"}, usage: "unexpected argument"},
	})
	checkParse(t, newAtlasPublishCmd, []parseCase[atlasPublishOptions]{
		{args: []string{"--kind", "decision", "the text"}, want: atlasPublishOptions{Kind: "decision", Text: "the text"}},
		{args: []string{"the text"}, usage: "missing --kind"},
	})
	amend := func(inv *Invocation, runF func(context.Context, *atlasAmendOptions) error) *cli.Command {
		return newAtlasAmendCmd(inv, false, runF)
	}
	resolve := func(inv *Invocation, runF func(context.Context, *atlasAmendOptions) error) *cli.Command {
		return newAtlasAmendCmd(inv, true, runF)
	}
	checkParse(t, amend, []parseCase[atlasAmendOptions]{
		{args: []string{"doc_1", "next text"}, want: atlasAmendOptions{ID: "doc_1", Text: "next text"}},
		{args: []string{"doc_1"}, usage: "atlas amend ID TEXT"},
		{args: []string{}, usage: "want a document ID"},
	})
	checkParse(t, resolve, []parseCase[atlasAmendOptions]{
		{args: []string{"doc_1", "--json"}, want: atlasAmendOptions{JSON: true, ID: "doc_1", Resolve: true}},
		{args: []string{"a", "b", "c"}, usage: "want a document ID"},
	})
	checkParse(t, newAtlasShowCmd, []parseCase[atlasShowOptions]{
		{args: []string{"doc_1"}, want: atlasShowOptions{ID: "doc_1"}},
		{args: []string{}, usage: "missing document id"},
	})
	checkParse(t, newAtlasListCmd, []parseCase[atlasListOptions]{{args: []string{"--json"}, want: atlasListOptions{JSON: true}}})
}

func TestParseBlocksAndBrain(t *testing.T) {
	checkParse(t, newBlocksCmd, []parseCase[blocksOptions]{
		{args: []string{}, want: blocksOptions{}},
		{args: []string{"--json"}, want: blocksOptions{JSON: true}},
		{args: []string{"stray"}, usage: `unexpected argument "stray"`},
	})
	checkParse(t, newBrainShowCmd, []parseCase[brainShowOptions]{
		{args: []string{}, want: brainShowOptions{}},
		{args: []string{"--json"}, want: brainShowOptions{JSON: true}},
	})
	checkParse(t, newBrainRenameCmd, []parseCase[brainRenameOptions]{
		{args: []string{"atlas"}, want: brainRenameOptions{Name: "atlas"}},
		{args: []string{"atlas", "--json"}, want: brainRenameOptions{JSON: true, Name: "atlas"}},
		{args: []string{}, usage: "missing the new name"},
		{args: []string{"a", "b"}, usage: "too many arguments"},
	})
}

func TestParseGitHooks(t *testing.T) {
	install := func(inv *Invocation, runF func(context.Context, *hooksInstallOptions) error) *cli.Command {
		return newHooksInstallCmd(inv, true, runF)
	}
	uninstall := func(inv *Invocation, runF func(context.Context, *hooksInstallOptions) error) *cli.Command {
		return newHooksInstallCmd(inv, false, runF)
	}
	checkParse(t, install, []parseCase[hooksInstallOptions]{
		{args: []string{}, want: hooksInstallOptions{Install: true}},
		{args: []string{"--bare", "--require-passkey", "--protect", "main", "--protect", "rel", "--print", "--json"},
			want: hooksInstallOptions{JSON: true, Install: true, Bare: true, RequirePasskey: true, Protect: []string{"main", "rel"}, Print: true}},
		{args: []string{"stray"}, usage: `unexpected argument "stray"`},
	})
	checkParse(t, uninstall, []parseCase[hooksInstallOptions]{
		{args: []string{"--json"}, want: hooksInstallOptions{JSON: true}},
		{args: []string{"--bare"}, usage: "unknown flag --bare"},
	})
	checkParse(t, newHooksRunCmd, []parseCase[hooksRunOptions]{
		{args: []string{"reference-transaction", "prepared"}, want: hooksRunOptions{Hook: "reference-transaction", State: "prepared"}},
		{args: []string{"pre-receive", "--require-passkey", "--protect", "main"}, want: hooksRunOptions{Hook: "pre-receive", RequirePasskey: true, Protect: []string{"main"}}},
		{args: []string{"post-commit"}, usage: `unknown git hook "post-commit"`},
		{args: []string{}, usage: `unknown git hook ""`},
	})
}

func TestParseHookRun(t *testing.T) {
	claude := func(inv *Invocation, runF func(context.Context, *hookRunOptions) error) *cli.Command {
		return newHookRunCmd(inv, session.HostClaude, runF)
	}
	codex := func(inv *Invocation, runF func(context.Context, *hookRunOptions) error) *cli.Command {
		return newHookRunCmd(inv, session.HostCodex, runF)
	}
	checkParse(t, claude, []parseCase[hookRunOptions]{
		{args: []string{"SessionStart"}, want: hookRunOptions{Host: "claude", Event: "SessionStart", Budget: session.DefaultBudget}},
		{args: []string{"PreCompact", "--budget", "9000", "--block-auto-compact", "--agent", "a2"},
			want: hookRunOptions{Host: "claude", Event: "PreCompact", Budget: 9000, BlockAutoCompact: true}},
	})
	checkParse(t, codex, []parseCase[hookRunOptions]{
		{args: []string{"Stop"}, want: hookRunOptions{Host: "codex", Event: "Stop", Budget: session.DefaultBudget}},
	})
	// A hook's mistakes are no usage errors: exit 0, and nothing runs.
	for _, args := range [][]string{{}, {"Stop", "Stop"}, {"Stop", "--nope"}, {"Stop", "--budget", "lots"}} {
		got, err := parse(t, claude, args...)
		if status, ok := err.(exitStatus); !ok || status != 0 || got != nil {
			t.Errorf("hook claude %v: %v, ran %v; want exit 0 and no run", args, err, got != nil)
		}
	}
}

func TestParseMissionRunLogsAndDiff(t *testing.T) {
	checkParse(t, newMissionGateCmd, []parseCase[runLogOptions]{
		{args: []string{msn}, want: runLogOptions{MissionID: msn, Log: runs.LogGate}},
		{args: []string{msn, "--regate", "--json"}, want: runLogOptions{JSON: true, MissionID: msn, Log: runs.LogRegate}},
		{args: []string{"msn_nope"}, usage: "is not a mission id"},
		{args: []string{}, usage: "missing mission id"},
	})
	checkParse(t, newMissionOutputCmd, []parseCase[runLogOptions]{
		{args: []string{msn, "--json"}, want: runLogOptions{JSON: true, MissionID: msn, Log: runs.LogAgent}},
		{args: []string{msn, "--regate"}, usage: "unknown flag --regate"},
	})
	checkParse(t, newMissionDiffCmd, []parseCase[missionDiffOptions]{
		{args: []string{msn}, want: missionDiffOptions{MissionID: msn}},
		{args: []string{msn, "--stat"}, want: missionDiffOptions{MissionID: msn, Stat: true}},
		{args: []string{msn, msn}, usage: "too many arguments"},
	})
}

func TestParseMailReads(t *testing.T) {
	checkParse(t, newMailInboxCmd, []parseCase[mailInboxOptions]{
		{args: []string{}, want: mailInboxOptions{Limit: 50}},
		{args: []string{"--unread", "--mark-read", "--limit", "0", "--agent", "a2", "--json"}, want: mailInboxOptions{JSON: true, Unread: true, MarkRead: true}},
		{args: []string{"stray"}, usage: `unexpected argument "stray"`},
		{args: []string{"--limit", "many"}, usage: "invalid value"},
	})
	checkParse(t, newMailShowCmd, []parseCase[mailShowOptions]{
		{args: []string{"0123456789ab"}, want: mailShowOptions{ID: "0123456789ab"}},
		{args: []string{"0123456789ab", "--json"}, want: mailShowOptions{JSON: true, ID: "0123456789ab"}},
		{args: []string{}, usage: "missing letter id"},
		{args: []string{"a", "b"}, usage: "too many arguments"},
	})
	checkParse(t, newMailFatesCmd, []parseCase[mailFatesOptions]{
		{args: []string{}, want: mailFatesOptions{}},
		{args: []string{"--json"}, want: mailFatesOptions{JSON: true}},
		{args: []string{"stray"}, usage: `unexpected argument "stray"`},
	})
}

func TestParseMemoryResolveAndAgentKey(t *testing.T) {
	checkParse(t, newMemoryResolveCmd, []parseCase[memoryResolveOptions]{
		{args: []string{"mem_1", "--as", "withdrawn", "--rationale", "moot"}, want: memoryResolveOptions{ID: "mem_1", As: "withdrawn", Rationale: "moot"}},
		{args: []string{"mem_1", "--as", "recorded", "--rationale", "done", "--json"}, want: memoryResolveOptions{JSON: true, ID: "mem_1", As: "recorded", Rationale: "done"}},
		{args: []string{}, usage: "missing memory id"},
		{args: []string{"mem_1", "--as", "recorded"}, usage: "memory resolve needs --as and --rationale"},
		{args: []string{"mem_1", "--rationale", "why"}, usage: "memory resolve needs --as and --rationale"},
	})
	checkParse(t, newAgentKeyCreateCmd, []parseCase[agentKeyCreateOptions]{
		{args: []string{"a2"}, want: agentKeyCreateOptions{Name: "a2"}},
		{args: []string{"a2", "--json"}, want: agentKeyCreateOptions{JSON: true, Name: "a2"}},
		{args: []string{}, usage: "missing agent name"},
		{args: []string{"a2", "b3"}, usage: "too many arguments"},
	})
}

func TestParseMissionReads(t *testing.T) {
	checkParse(t, newMissionShowCmd, []parseCase[missionShowOptions]{
		{args: []string{msn}, want: missionShowOptions{MissionID: msn}},
		{args: []string{msn, "--json"}, want: missionShowOptions{JSON: true, MissionID: msn}},
		{args: []string{"msn_nope"}, usage: "is not a mission id"},
		{args: []string{}, usage: "missing mission id"},
	})
	checkParse(t, newMissionLogCmd, []parseCase[missionLogOptions]{
		{args: []string{msn}, want: missionLogOptions{MissionID: msn}},
		{args: []string{msn, "--json"}, want: missionLogOptions{JSON: true, MissionID: msn}},
		{args: []string{msn, msn}, usage: "too many arguments"},
	})
	checkParse(t, newMissionHeadsCmd, []parseCase[missionHeadsOptions]{
		{args: []string{}, want: missionHeadsOptions{}},
		{args: []string{"--phase", "merge_wait", "--json"}, want: missionHeadsOptions{JSON: true, Phase: "merge_wait"}},
		{args: []string{"--phase", "nowhere"}, usage: `--phase "nowhere"`},
		{args: []string{"stray"}, usage: `unexpected argument "stray"`},
	})
	checkParse(t, newMissionFoldCmd, []parseCase[missionFoldOptions]{
		{args: []string{}, want: missionFoldOptions{OlderThan: 30 * 24 * time.Hour}},
		{args: []string{"--older-than", "12h", "--agent", "a2", "--json"}, want: missionFoldOptions{JSON: true, OlderThan: 12 * time.Hour}},
		{args: []string{"--older-than", "0"}, want: missionFoldOptions{}},
		{args: []string{"--older-than", "soon"}, usage: "--older-than: "},
	})
}

func TestParseSkeleton(t *testing.T) {
	for _, newCmd := range []func(*Invocation, func(context.Context, *storeWriteOptions) error) *cli.Command{newSkeletonScanCmd, newSkeletonReconcileCmd} {
		checkParse(t, newCmd, []parseCase[storeWriteOptions]{
			{args: []string{}, want: storeWriteOptions{ExpectedStoreVersion: -1}},
			{args: []string{"--expected-store-version", "4", "--agent", "a2", "--json"}, want: storeWriteOptions{JSON: true, ExpectedStoreVersion: 4}},
			{args: []string{"stray"}, usage: `unexpected argument "stray"`},
		})
	}
	checkParse(t, newSkeletonShowCmd, []parseCase[skeletonShowOptions]{
		{args: []string{}, want: skeletonShowOptions{}},
		{args: []string{"--json"}, want: skeletonShowOptions{JSON: true}},
		{args: []string{"stray"}, usage: `unexpected argument "stray"`},
	})
	checkParse(t, newSkeletonRatifyCmd, []parseCase[skeletonRatifyOptions]{
		{args: []string{}, want: skeletonRatifyOptions{ExpectedStoreVersion: -1}},
		{args: []string{"--block", "sb_a", "--block", "sb_b", "--expected-store-version", "2", "--json"},
			want: skeletonRatifyOptions{JSON: true, ExpectedStoreVersion: 2, Blocks: []string{"sb_a", "sb_b"}}},
		{args: []string{"stray"}, usage: `unexpected argument "stray"`},
	})
}

func TestParseVersionAndCompletion(t *testing.T) {
	checkParse(t, newVersionCmd, []parseCase[versionOptions]{
		{args: []string{}, want: versionOptions{}},
		{args: []string{"--json"}, want: versionOptions{JSON: true}},
		{args: []string{"stray"}, usage: `unexpected argument "stray"`},
	})
	checkParse(t, newCompletionCmd, []parseCase[completionOptions]{
		{args: []string{"zsh"}, want: completionOptions{Shell: "zsh"}},
		{args: []string{"tcsh"}, usage: `no completion for shell "tcsh"`},
		{args: []string{}, usage: "missing shell"},
	})
}
