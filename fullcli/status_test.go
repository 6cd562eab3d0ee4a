package fullcli

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	mcli "github.com/m1nd/m1nd/cli"
	"github.com/m1nd/m1nd/testkit/gittest"
)

func TestRunStatus(t *testing.T) {
	gittest.SetEnv(t)
	r := gittest.Init(t, "proj")
	r.CommitFiles("files", map[string]string{"core/core.go": "package core\n"})
	var out, errb bytes.Buffer
	s := &mcli.IOStreams{In: strings.NewReader(""), Out: &out, Err: &errb}
	ctx := context.Background()
	if code := Main(ctx, []string{"m1nd", "-C", r.Dir, "init"}, s); code != 0 {
		t.Fatalf("init: exit %d: %s", code, errb.String())
	}
	out.Reset()
	inv := mcli.NewInvocation(s, r.Dir)
	if err := runStatus(ctx, &statusOptions{IO: s, Flows: inv.Flows}); err != nil {
		t.Fatal(err)
	}
	if want := "brain    proj\nstore    none yet (m1nd skeleton scan creates it)\nmissions 0\n"; out.String() != want {
		t.Fatalf("status:\n%s\nwant:\n%s", out.String(), want)
	}
	out.Reset()
	if err := runStatus(ctx, &statusOptions{IO: s, JSON: true, Flows: inv.Flows}); err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(out.Bytes(), &got); err != nil || got["store_version"] != float64(0) || got["missions"] != float64(0) {
		t.Fatalf("status --json: %v (%v)", got, err)
	}

	// Outside a repository the dependency fails and the run says so: a
	// usage error (exit 2), nothing on stdout.
	out.Reset()
	errb.Reset()
	nowhere := filepath.Join(t.TempDir(), "nowhere")
	if code := Main(ctx, []string{"m1nd", "-C", nowhere, "status"}, &mcli.IOStreams{In: strings.NewReader(""), Out: &out, Err: &errb}); code != 2 || out.Len() != 0 || !strings.Contains(errb.String(), "nowhere") {
		t.Fatalf("status outside a repository: exit %d, stdout %q, stderr %q", code, out.String(), errb.String())
	}
}
