package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/m1nd/m1nd/rules"
)

// testClock is the time every run test writes at.
var testClock = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)

// streams are in-memory IOStreams at testClock: stdin in, a terminal when tty.
func streams(in string, tty bool) (s *IOStreams, out, errb *bytes.Buffer) {
	out, errb = &bytes.Buffer{}, &bytes.Buffer{}
	return &IOStreams{In: strings.NewReader(in), Out: out, Err: errb, Interactive: func() bool { return tty },
		Now: func() time.Time { return testClock }}, out, errb
}

// at opens run funcs' dependencies on the real repository at dir, as Main would.
func at(dir string, s *IOStreams) *Invocation { return &Invocation{io: s, dir: dir} }

func agentIs(id string) func() (string, error) { return func() (string, error) { return id, nil } }

// decode parses the one JSON document a run wrote.
func decode(t *testing.T, out *bytes.Buffer) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(out.Bytes(), &m); err != nil {
		t.Fatalf("not one JSON object: %v\n%s", err, out)
	}
	return m
}

// wantRefusal checks that err is a refusal with code.
func wantRefusal(t *testing.T, err error, code rules.Code) {
	t.Helper()
	r, ok := rules.AsRefusal(err)
	if !ok || r.Code != code {
		t.Fatalf("error %v, want refused %s", err, code)
	}
}

var testCtx = context.Background()

func TestRunInit(t *testing.T) {
	r := newRepo(t)
	s, out, _ := streams("", false)
	inv := at(r.Dir, s)
	if err := runInit(testCtx, &initOptions{IO: s, Flows: inv.Flows, Hook: guardFolder("m1nd")}); err != nil {
		t.Fatal(err)
	}
	contains(t, out.String(), "brain proj\nruntime dir ", "created ")
	out.Reset()
	if err := runInit(testCtx, &initOptions{IO: s, JSON: true, Flows: inv.Flows, Hook: guardFolder("m1nd")}); err != nil {
		t.Fatal(err)
	}
	if got := decode(t, out); got["ok"] != true || got["brain"] != "proj" || len(got["created"].([]any)) != 0 {
		t.Fatalf("init again: %v", got)
	}

}

func TestRunVerifyAndSync(t *testing.T) {
	dir, block := scanned(t)
	must(t, dir, "", "hooks", "uninstall") // the hook would run an m1nd from PATH
	s, out, errb := streams("", false)
	inv := at(dir, s)
	if err := runVerify(testCtx, &verifyOptions{IO: s, Repo: inv.OpenRepo}); err != nil {
		t.Fatal(err)
	}
	contains(t, out.String(), "2 refs checked, 0 faults\n") // the store and the brain's registration
	out.Reset()
	if err := runVerify(testCtx, &verifyOptions{IO: s, JSON: true, Repo: inv.OpenRepo}); err != nil {
		t.Fatal(err)
	}
	if got := decode(t, out); got["ok"] != true || len(got["faults"].([]any)) != 0 {
		t.Fatalf("verify --json: %v", got)
	}

	bare := filepath.Join(t.TempDir(), "remote.git")
	if b, err := execGit(dir, "init", "-q", "--bare", bare).CombinedOutput(); err != nil {
		t.Fatalf("git init --bare: %v\n%s", err, b)
	}
	gitOut(t, dir, "remote", "add", "origin", bare)
	must(t, dir, "", "mission", "new", "--block", block)
	out.Reset()
	if err := runSync(testCtx, &syncOptions{IO: s, JSON: true, Repo: inv.OpenRepo, Remote: "origin"}); err != nil {
		t.Fatalf("sync: %v\n%s", err, errb)
	}
	if got := decode(t, out); got["ok"] != true || len(got["pushed"].([]any)) != 3 { // the store, the registration, the mission
		t.Fatalf("sync --json: %v", got)
	}
	out.Reset()
	if err := runSync(testCtx, &syncOptions{IO: s, Repo: inv.OpenRepo, Remote: "origin"}); err != nil {
		t.Fatal(err)
	}
	if want := "sync with origin: 3 unchanged, 0 refs fast-forwarded, 0 refs created, 0 refs pushed\n"; out.String() != want {
		t.Fatalf("sync:\n%s\nwant:\n%s", out, want)
	}
}

func TestRunMissionFlow(t *testing.T) {
	dir, block := scanned(t)
	s, out, _ := streams("", false)
	inv := at(dir, s)
	newOpts := func() *missionNewOptions {
		return &missionNewOptions{IO: s, Agent: agentIs("a1"), Flows: inv.Flows, Block: block, Seat: "hand", Capability: "hand-runner"}
	}
	if err := runMissionNew(testCtx, newOpts()); err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(out.String()) // opened ID (letter L, judging) on REF
	if len(f) != 7 || f[0] != "opened" || !isMissionID(f[1]) || f[6] != "refs/m1nd/missions/"+f[1] {
		t.Fatalf("mission new: %q", out)
	}
	id := f[1]

	// A packet from stdin, delivered to an inbox: the reply says both.
	s2, out2, _ := streams("# the packet\n", false)
	o := newOpts()
	o.IO, o.JSON, o.Packet, o.DeliverTo = s2, true, "-", "a2"
	if err := runMissionNew(testCtx, o); err != nil {
		t.Fatal(err)
	}
	got := decode(t, out2)
	if d, _ := got["delivered"].(map[string]any); got["ok"] != true || !isMissionID(got["mission_id"].(string)) || d["to"] != "a2" {
		t.Fatalf("mission new --deliver-to --json: %v", got)
	}
	o = newOpts()
	o.Packet = filepath.Join(t.TempDir(), "missing.md")
	var u *usageError
	if err := runMissionNew(testCtx, o); !errors.As(err, &u) || !strings.Contains(u.msg, "read packet") {
		t.Fatalf("a missing packet: %v", err)
	}

	// next | post, through the run funcs.
	out.Reset()
	if err := runMissionNext(testCtx, &missionNextOptions{IO: s, Flows: inv.Flows, MissionID: id, Phase: "executing"}); err != nil {
		t.Fatal(err)
	}
	letter := out.String()
	if got := decode(t, out); got["mission_seq"] != float64(2) || got["phase"] != "executing" || got["updated_at"] != "2026-12-01T10:00:00Z" {
		t.Fatalf("next: %v", got)
	}
	s3, out3, _ := streams(letter, false)
	post := &missionPostOptions{IO: s3, Agent: agentIs("a1"), Flows: inv.Flows}
	if err := runMissionPost(testCtx, post); err != nil {
		t.Fatal(err)
	}
	if got := decode(t, out3); got["ok"] != true || got["mission_id"] != id || got["deduped"] != false {
		t.Fatalf("post: %v", got)
	}
	s3.In = strings.NewReader("{not json")
	wantRefusal(t, runMissionPost(testCtx, post), rules.InvalidLetter)

	// Archive: no terminal, a wrong answer, then the right one (which the
	// law judges: an executing mission is not archived).
	archive := &missionArchiveOptions{IO: s, Agent: agentIs("a1"), Missions: inv.Flows, MissionID: id}
	wantRefusal(t, runMissionArchive(testCtx, archive), rules.HumanGestureRequired)
	tty, ttyOut, _ := streams("no\n", true)
	archive.IO = tty
	wantRefusal(t, runMissionArchive(testCtx, archive), rules.HumanGestureRequired)
	contains(t, ttyOut.String(), "Archive "+id+"? Its merge_wait head is superseded and the landing bell drops.\nType "+id+" to confirm: ")
	tty.In = strings.NewReader(id + "\n")
	wantRefusal(t, runMissionArchive(testCtx, archive), rules.InvalidTransition)
}

// isMissionID reports whether id looks like a mission id.
func isMissionID(id string) bool { return strings.HasPrefix(id, "msn_") && len(id) == 16 }

func TestRunSkeletonEditAndReceiptImport(t *testing.T) {
	dir, block := scanned(t)
	rename := `[{"op":"rename","block_id":"` + block + `","name":"Core","purpose":"the core package"}]`
	s, out, _ := streams(rename, false)
	inv := at(dir, s)
	edit := &skeletonEditOptions{IO: s, Agent: agentIs("a1"), Store: inv.Flows, ExpectedStoreVersion: 1, Seat: "owner", Ops: "-"}
	if err := runSkeletonEdit(testCtx, edit); err != nil {
		t.Fatal(err)
	}
	contains(t, out.String(), "  ~ "+block+"\n")
	// The same batch at the version read before the edit: the store moved.
	s.In = strings.NewReader(rename)
	wantRefusal(t, runSkeletonEdit(testCtx, edit), rules.StoreVersionConflict)
	// At the current version (none given) it restates the store.
	out.Reset()
	s.In, edit.ExpectedStoreVersion = strings.NewReader(rename), -1
	if err := runSkeletonEdit(testCtx, edit); err != nil {
		t.Fatal(err)
	}
	if want := "store v2 unchanged: the batch restates what the store already says\n"; out.String() != want {
		t.Fatalf("edit again: %q", out)
	}

	rc := `{"block_id":"` + block + `","type":"test","emitter":{"kind":"verb","id":"go-test"},
"scope":{"block_id":"` + block + `","boundary_version":1,"contract_version":1},
"evidence":{"artifact_hash":"sha256:` + strings.Repeat("a", 64) + `","evidence_refs":["log"],
"command":"go test ./...","cwd":".","exit_status":0,"started_at":"2026-11-30T10:00:00Z","ended_at":"2026-11-30T10:01:00Z"}}`
	receipt := filepath.Join(t.TempDir(), "receipt.json")
	if err := os.WriteFile(receipt, []byte(rc), 0o644); err != nil {
		t.Fatal(err)
	}
	imp := &receiptImportOptions{IO: s, Agent: agentIs("a1"), Store: inv.Flows, ExpectedStoreVersion: 2, Block: block, Receipt: receipt}
	wantRefusal(t, runReceiptImport(testCtx, imp), rules.HumanGestureRequired)
	tty, ttyOut, _ := streams(block+"\n", true)
	imp.IO, imp.JSON = tty, true
	if err := runReceiptImport(testCtx, imp); err != nil {
		t.Fatal(err)
	}
	prompt := "Import the receipt in " + receipt + " into " + block + " at store v2?\nType " + block + " to confirm: "
	reply, ok := strings.CutPrefix(ttyOut.String(), prompt)
	if !ok {
		t.Fatalf("no prompt before the reply:\n%s", ttyOut)
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(reply), &got); err != nil || got["ok"] != true || got["store_version"] != float64(3) {
		t.Fatalf("receipt import --json: %v %s", err, reply)
	}
}

func TestRunMailAndMemory(t *testing.T) {
	r := newRepo(t)
	s, out, _ := streams("", false)
	inv := at(r.Dir, s)
	send := &mailSendOptions{IO: s, Agent: agentIs("a1"), Flows: inv.Flows, To: "a2", Class: "note", What: "hello"}
	if err := runMailSend(testCtx, send); err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(out.String()) // sent letter ID to a2 (REF)
	if len(f) != 6 || f[0] != "sent" || f[4] != "a2" {
		t.Fatalf("mail send: %q", out)
	}
	out.Reset()
	if err := runMailSend(testCtx, send); err != nil { // the same letter at the same time
		t.Fatal(err)
	}
	contains(t, out.String(), "letter "+f[2]+" was already sent")
	out.Reset()
	send.JSON, send.What = true, "again"
	if err := runMailSend(testCtx, send); err != nil {
		t.Fatal(err)
	}
	if got := decode(t, out); got["ok"] != true || got["to"] != "a2" || got["deduped"] != false {
		t.Fatalf("mail send --json: %v", got)
	}
	bad := errors.New("no agent")
	send.Agent = func() (string, error) { return "", bad }
	if err := runMailSend(testCtx, send); !errors.Is(err, bad) {
		t.Fatalf("a failing agent: %v", err)
	}

	out.Reset()
	add := &memoryAddOptions{IO: s, Agent: agentIs("a1"), Flows: inv.Flows, Text: "tests run in-process", Sort: "learned", About: []string{"sb_x"}}
	if err := runMemoryAdd(testCtx, add); err != nil {
		t.Fatal(err)
	}
	if f := strings.Fields(out.String()); len(f) != 4 || f[0] != "memory" || f[2] != "recorded" || f[3] != "(learned)" {
		t.Fatalf("memory add: %q", out)
	}
	recall := &memoryRecallOptions{IO: s, Agent: agentIs("a1"), Book: inv.Flows, Limit: 20, MaxBytes: 4096}
	out.Reset()
	if err := runMemoryRecall(testCtx, recall); err != nil {
		t.Fatal(err)
	}
	contains(t, out.String(), "learned", "a1: tests run in-process\n")
	out.Reset()
	recall.About, recall.JSON = "sb_other", true
	if err := runMemoryRecall(testCtx, recall); err != nil {
		t.Fatal(err)
	}
	if want := `{"ok":true,"cut":0,"memories":[]}` + "\n"; out.String() != want {
		t.Fatalf("recall of nothing: %s, want %s", out, want)
	}
	out.Reset()
	recall.JSON = false
	if err := runMemoryRecall(testCtx, recall); err != nil {
		t.Fatal(err)
	}
	if out.String() != "no memory matches\n" {
		t.Fatalf("recall of nothing as text: %q", out)
	}
}
