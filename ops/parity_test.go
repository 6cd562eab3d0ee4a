package ops_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/m1nd/m1nd/chain"
	"github.com/m1nd/m1nd/cli"
	"github.com/m1nd/m1nd/fullcli"
	"github.com/m1nd/m1nd/ops"
	"github.com/m1nd/m1nd/rules"
	"github.com/m1nd/m1nd/testkit/gittest"
	"github.com/m1nd/m1nd/tray"
)

// surfaces is one brain, shop, with a scanned store, reachable through
// both surfaces: the CLI in-process (fullcli.Main with in-memory streams) and
// the real owner (tray.Server) over a loopback socket.
type surfaces struct {
	g     *gittest.Repo
	flows *ops.Flows
	owner *httptest.Server
}

func newSurfaces(t *testing.T) *surfaces {
	t.Helper()
	t.Setenv("M1ND_AGENT", "")
	g, flows := scannedShop(t, map[string]string{"core/a.go": "package core\n", "web/index.html": "<p>\n", "README.md": "x\n"}, time.Now())
	srv := tray.New(repoOf(flows), "shop", false)
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(hs.Close)
	u, _ := url.Parse(hs.URL)
	srv.SetPort(u.Port())
	return &surfaces{g: g, flows: flows, owner: hs}
}

// cli runs m1nd in the brain and returns its exit status and stdout.
func (s *surfaces) cli(t *testing.T, stdin string, args ...string) (int, []byte) {
	t.Helper()
	var out, errOut bytes.Buffer
	io := &cli.IOStreams{In: strings.NewReader(stdin), Out: &out, Err: &errOut, Interactive: func() bool { return false }}
	code := fullcli.Main(context.Background(), append([]string{"m1nd", "-C", s.g.Dir}, args...), io)
	if code != 0 && code != 3 {
		t.Fatalf("m1nd %s: exit %d\n%s%s", strings.Join(args, " "), code, out.String(), errOut.String())
	}
	return code, out.Bytes()
}

// http sends a request to the owner and returns its status and body.
func (s *surfaces) http(t *testing.T, method, path, body string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, s.owner.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, data
}

// refs lists the brain's refs/m1nd/ refs and where they point.
func (s *surfaces) refs() string {
	return s.g.Git("for-each-ref", "--format=%(refname) %(objectname)", "refs/m1nd/")
}

func decodeObject(t *testing.T, what string, data []byte) map[string]any {
	t.Helper()
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("%s: %q is not one JSON object: %v", what, data, err)
	}
	if dec.More() {
		t.Fatalf("%s: %q holds more than one JSON object", what, data)
	}
	return m
}

func jsonString(v string) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// The same bad request refused through the CLI (--json; mission post
// always answers JSON) and through the tray gives the same refusal: the same code, field and lesson in the
// same envelope, exit 3 on the CLI and the code's DESIGN §5 status over
// HTTP, and nothing written on either.
func TestSameRefusalThroughTheCLIAndTheTray(t *testing.T) {
	s := newSurfaces(t)
	ctx := context.Background()
	// alice opens a follow-up bob owes: the owner may not carry it.
	theirs, err := bookOf(s.flows).OpenFollowup(ctx, "alice", "bob", "check the web block", "", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	escape := filepath.Join(dir, "escape.md")
	os.WriteFile(escape, []byte("# Packet\x1b[31m red\n"), 0o644)
	long := filepath.Join(dir, "long.md")
	os.WriteFile(long, bytes.Repeat([]byte("x"), 16<<10+1), 0o644)
	otherBrain := func() string {
		ts := chain.Timestamp(time.Now())
		l := &chain.Letter{Schema: chain.LetterSchema, MissionID: "msn_0000000000aa", MissionSeq: 1, BlockID: "sb_shop_core", BrainRef: "other",
			Seat: "hand", Capability: "hand-runner", Phase: "judging", StartedAt: ts, UpdatedAt: ts}
		return string(l.Canonical())
	}()

	for _, tt := range []struct {
		label      string
		args       []string // after m1nd -C DIR
		stdin      string
		path, body string // the tray's request
		code       rules.Code
		field      string
	}{
		{"unknown block",
			[]string{"mission", "new", "--json", "--agent", "owner", "--block", "sb_shop_nope"}, "",
			"/api/mission_new", `{"agent_id":"owner","block_id":"sb_shop_nope"}`,
			rules.UnknownBlock, "block_id"},
		{"deliver to a name that is not an agent id",
			[]string{"mission", "new", "--json", "--agent", "owner", "--block", "sb_shop_core", "--deliver-to", "Bob Smith"}, "",
			"/api/mission_new", `{"agent_id":"owner","block_id":"sb_shop_core","deliver_to":"Bob Smith"}`,
			rules.InvalidLetter, "deliver_to"},
		{"deliver to oneself",
			[]string{"mission", "new", "--json", "--agent", "owner", "--block", "sb_shop_core", "--deliver-to", "owner"}, "",
			"/api/mission_new", `{"agent_id":"owner","block_id":"sb_shop_core","deliver_to":"owner"}`,
			rules.InvalidLetter, "deliver_to"},
		{"undeliverable packet: an escape byte",
			[]string{"mission", "new", "--json", "--agent", "owner", "--block", "sb_shop_core", "--packet", escape, "--deliver-to", "bob"}, "",
			"/api/mission_new", `{"agent_id":"owner","block_id":"sb_shop_core","packet_markdown":"# Packet\u001b[31m red\n","deliver_to":"bob"}`,
			rules.InvalidLetter, "deliver_to"},
		{"undeliverable packet: too long",
			[]string{"mission", "new", "--json", "--agent", "owner", "--block", "sb_shop_core", "--packet", long, "--deliver-to", "bob"}, "",
			"/api/mission_new", `{"agent_id":"owner","block_id":"sb_shop_core","packet_markdown":"` + strings.Repeat("x", 16<<10+1) + `","deliver_to":"bob"}`,
			rules.InvalidLetter, "deliver_to"},
		{"unknown follow-up",
			[]string{"mission", "new", "--json", "--agent", "owner", "--block", "sb_shop_core", "--followup", "0123456789ab"}, "",
			"/api/mission_new", `{"agent_id":"owner","block_id":"sb_shop_core","followup":"0123456789ab"}`,
			rules.NotPublisher, "followup"},
		{"someone else's follow-up",
			[]string{"mission", "new", "--json", "--agent", "owner", "--block", "sb_shop_core", "--followup", theirs}, "",
			"/api/mission_new", `{"agent_id":"owner","block_id":"sb_shop_core","followup":` + jsonString(theirs) + `}`,
			rules.NotPublisher, "followup"},
		{"a seat that is none",
			[]string{"mission", "new", "--json", "--agent", "owner", "--block", "sb_shop_core", "--seat", "captain"}, "",
			"/api/mission_new", `{"agent_id":"owner","block_id":"sb_shop_core","seat":"captain"}`,
			rules.InvalidLetter, "seat"},
		{"a letter of another brain",
			[]string{"mission", "post", "--agent", "owner"}, otherBrain,
			"/api/mission_post", `{"agent_id":"owner","letter":` + otherBrain + `}`,
			rules.BrainMismatch, "brain_ref"},
	} {
		t.Run(tt.label, func(t *testing.T) {
			before := s.refs()
			exit, stdout := s.cli(t, tt.stdin, tt.args...)
			status, body := s.http(t, "POST", tt.path, tt.body)
			if exit != 3 {
				t.Errorf("CLI: exit %d, want 3: %s", exit, stdout)
			}
			if want := rules.HTTPStatus(tt.code); status != want {
				t.Errorf("tray: %d, want %d: %s", status, want, body)
			}
			fromCLI, fromTray := decodeObject(t, "CLI", stdout), decodeObject(t, "tray", body)
			if !reflect.DeepEqual(fromCLI, fromTray) {
				t.Errorf("the envelopes differ:\n CLI  %s\n tray %s", stdout, body)
			}
			want := map[string]any{"ok": false, "refused": string(tt.code), "field": tt.field, "lesson": fromTray["lesson"]}
			if !reflect.DeepEqual(fromTray, want) || fromTray["lesson"] == "" {
				t.Errorf("tray: %s, want code %s on field %s with a lesson", body, tt.code, tt.field)
			}
			if after := s.refs(); after != before {
				t.Errorf("a refusal wrote:\n%s\nwas:\n%s", after, before)
			}
		})
	}
}

// The CLI and the tray answer one block view and one status view.
func TestSameViewsThroughTheCLIAndTheTray(t *testing.T) {
	s := newSurfaces(t)
	if _, err := s.flows.OpenMission(context.Background(), ops.MissionRequest{BlockID: "sb_shop_core", Agent: "owner", Now: time.Now()}); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		label string
		args  []string
		path  string
		keys  []string // what the page, the tests and the scripts read
	}{
		{"blocks", []string{"blocks", "--json"}, "/api/system_blocks", []string{"ok", "served_brain", "store_version", "skeleton_id", "skeleton", "blocks"}},
		{"status", []string{"status", "--json"}, "/api/status", []string{"ok", "brain", "store_version", "skeleton", "blocks", "missions", "phases"}},
	} {
		t.Run(tt.label, func(t *testing.T) {
			exit, stdout := s.cli(t, "", tt.args...)
			status, body := s.http(t, "GET", tt.path, "")
			if exit != 0 || status != 200 {
				t.Fatalf("CLI exit %d, tray %d", exit, status)
			}
			fromCLI, fromTray := decodeObject(t, "CLI", stdout), decodeObject(t, "tray", body)
			if !reflect.DeepEqual(fromCLI, fromTray) {
				t.Errorf("the views differ:\n CLI  %s\n tray %s", stdout, body)
			}
			for _, k := range tt.keys {
				if _, ok := fromTray[k]; !ok {
					t.Errorf("no %q in %s", k, body)
				}
			}
		})
	}
	_, body := s.http(t, "GET", "/api/system_blocks", "")
	var view struct {
		Blocks []map[string]any `json:"blocks"`
	}
	if err := json.Unmarshal(body, &view); err != nil || len(view.Blocks) == 0 {
		t.Fatalf("blocks: %s", body)
	}
	for _, k := range []string{"block_id", "name", "purpose", "kind", "state", "boundary_version", "contract_version", "membership",
		"receipt_contract", "receipts", "candidate_meta", "required", "needs_owner_naming", "receipt_count", "colour", "why"} {
		if _, ok := view.Blocks[0][k]; !ok {
			t.Errorf("a block has no %q: %v", k, view.Blocks[0])
		}
	}
	if _, isList := view.Blocks[0]["receipts"].([]any); !isList {
		t.Errorf("receipts is the list the page reads: %v", view.Blocks[0]["receipts"])
	}
}
