package cli

import (
	"slices"
	"strings"

	"github.com/urfave/cli/v2"
)

// examples are each verb's example invocations, shown at the end of its
// --help under "Examples:" (verbs whose description already shows one
// may have none here). TestEveryVerbHasAnExample keeps every verb covered.
var examples = []verbExamples{
	{"init", []string{"m1nd init", "m1nd -C ../other-repo init --json"}},
	{"status", []string{"m1nd status", "m1nd status --json"}},
	{"mission new", []string{"m1nd mission new --block sb_myrepo_core", "m1nd mission new --block sb_myrepo_core --packet packet.md --json"}},
	{"mission post", []string{"m1nd mission post letter.json", "m1nd mission next msn_0123456789ab --phase executing | m1nd mission post"}},
	{"mission show", []string{"m1nd mission show msn_0123456789ab", "m1nd mission show msn_0123456789ab --json"}},
	{"brain show", []string{"m1nd brain show", "m1nd brain show --json"}},
	{"brain rename", []string{"m1nd brain rename shop"}},
	{"brain keys", []string{"m1nd brain keys", "m1nd brain keys --json | jq -r .fingerprint"}},
	{"mission log", []string{"m1nd mission log msn_0123456789ab"}},
	{"mission gate", []string{"m1nd mission gate msn_0123456789ab", "m1nd mission gate --regate msn_0123456789ab"}},
	{"mission output", []string{"m1nd mission output msn_0123456789ab"}},
	{"mission diff", []string{"m1nd mission diff msn_0123456789ab --stat"}},
	{"mission heads", []string{"m1nd mission heads", "m1nd mission heads --phase merge_wait --json"}},
	{"mission archive", []string{"m1nd mission archive msn_0123456789ab    # at a terminal: type the id to confirm"}},
	{"mission fold", []string{"m1nd mission fold                        # fold missions finished over 30 days ago into refs/m1nd/archive", "m1nd mission fold --older-than 0 --json"}},
	{"land", []string{"m1nd land msn_0123456789ab    # at a terminal: type the block id to confirm", "m1nd land msn_0123456789ab --into release"}},
	{"skeleton scan", []string{"m1nd skeleton scan", "m1nd skeleton scan --json"}},
	{"skeleton reconcile", []string{"m1nd skeleton reconcile --expected-store-version 6"}},
	{"skeleton show", []string{"m1nd skeleton show"}},
	{"skeleton edit", []string{"m1nd skeleton edit --expected-store-version 1 ops.json", `echo '[{"op":"rename","block_id":"sb_myrepo_core","name":"Ledger core"}]' | m1nd skeleton edit --expected-store-version 1 -`}},
	{"skeleton ratify", []string{"m1nd skeleton ratify    # at a terminal: type the skeleton id to confirm", "m1nd skeleton ratify --block sb_myrepo_core --expected-store-version 2"}},
	{"blocks", []string{"m1nd blocks", "m1nd blocks --json"}},
	{"receipt import", []string{"m1nd receipt import --expected-store-version 3 --block sb_myrepo_core receipt.json"}},
	{"mail send", []string{`m1nd mail send --to bob --class ask --what "who owns the web block?"`, `m1nd mail send --to all --what "main is red; hold your merges"`}},
	{"mail inbox", []string{"m1nd mail inbox --unread", "m1nd mail inbox --agent bob --mark-read --json"}},
	{"mail show", []string{"m1nd mail show 0123456789ab"}},
	{"mail fates", []string{"m1nd mail fates --json"}},
	{"hook claude", []string{"m1nd hook claude SessionStart < event.json    # as .claude/settings.json runs it"}},
	{"hook codex", []string{"m1nd hook codex Stop < event.json    # as .codex/hooks.json runs it"}},
	{"hook install", []string{"m1nd hook install claude", "m1nd hook install codex --user", "m1nd hook install claude --allow-auto-compact"}},
	{"hook uninstall", []string{"m1nd hook uninstall claude"}},
	{"sessions", []string{"m1nd sessions", "m1nd sessions --all --json"}},
	{"mcp", []string{"m1nd mcp    # as .mcp.json or .codex/config.toml runs it, stdio", "M1ND_AGENT=bob m1nd -C ~/src/shop mcp"}},
	{"serve", []string{"m1nd serve", "m1nd serve --addr 127.0.0.1:7430 --read-only"}},
	{"runnerd", []string{"m1nd runnerd", "m1nd runnerd --config ~/.config/m1nd/runners.toml"}},
	{"spawn", []string{"m1nd spawn --runner build-1 --block sb_myrepo_core --packet packet.md", `m1nd spawn --runner build-1 --block sb_myrepo_core --ask "make the ledger test pass"`}},
	{"worktrees prune", []string{"m1nd worktrees prune"}},
	{"runners show", []string{"m1nd runners show", "m1nd runners show --json"}},
	{"runners approve", []string{"m1nd runners approve    # at a terminal, before the first passkey: type the runner ids to confirm"}},
	{"hooks install", []string{"m1nd hooks install", "m1nd -C /srv/git/myrepo.git hooks install --bare --trust-key 'abcd 0123 4567 89ef'"}},
	{"hooks uninstall", []string{"m1nd hooks uninstall"}},
	{"hooks run", []string{"m1nd hooks run pre-receive < updates    # as git runs it"}},
	{"verify", []string{"m1nd verify", "m1nd verify --json"}},
	{"sync", []string{"m1nd sync", "m1nd sync upstream --json", "m1nd sync --trust 'abcd 0123 4567 89ef'   # a first sync, once the key's owner read you its fingerprint"}},
	{"memory add", []string{`m1nd memory add --sort decided --about sb_myrepo_core "receipts are stored compacted"`, `m1nd memory add --sort learned --supersedes 1a2b3c4d5e6f "the ledger rounds half to even"`}},
	{"memory recall", []string{`m1nd memory recall --query "receipts" --limit 10`, "m1nd memory recall --about sb_myrepo_core --json"}},
	{"memory resolve", []string{`m1nd memory resolve 1a2b3c4d5e6f --as withdrawn --rationale "wrong"`}},
	{"followup open", []string{`m1nd followup open --owner bob "find out why the gate is red"`}},
	{"followup resolve", []string{`m1nd followup resolve 1a2b3c4d5e6f --recorded "a flaky clock in the ledger test"`}},
	{"followup list", []string{"m1nd followup list --open", "m1nd followup list --owner bob --json"}},
	{"atlas publish", []string{`m1nd atlas publish --kind plan "ship the tray, then the runner"`}},
	{"atlas amend", []string{`m1nd atlas amend atl_0123456789ab "ship the runner first"`}},
	{"atlas resolve", []string{"m1nd atlas resolve atl_0123456789ab"}},
	{"atlas show", []string{"m1nd atlas show atl_0123456789ab"}},
	{"atlas list", []string{"m1nd atlas list --json"}},
	{"agent key create", []string{"m1nd agent key create alice"}},
	{"demo", []string{"m1nd demo", "m1nd demo --no-serve /tmp/demo-brain"}},
	{"version", []string{"m1nd version", "m1nd --version"}},
}

// verbExamples are one verb's examples. A slice of them is laid out by
// the compiler, where a map would be built at every start of every call.
type verbExamples struct {
	path     string
	examples []string
}

// addExamples ends cmd's description with its examples, if any.
func addExamples(cmd *cli.Command, path string) {
	path = strings.TrimPrefix(path, "m1nd ")
	i := slices.IndexFunc(examples, func(e verbExamples) bool { return e.path == path })
	if i < 0 {
		return
	}
	ex := examples[i].examples
	var b strings.Builder
	if cmd.Description != "" {
		b.WriteString(cmd.Description)
		b.WriteString("\n\n")
	}
	b.WriteString("Examples:\n")
	for _, e := range ex {
		b.WriteString("\n   " + e)
	}
	cmd.Description = b.String()
}
