package ops_test

import (
	"context"
	"testing"
	"time"

	"github.com/m1nd/m1nd/brain"
	"github.com/m1nd/m1nd/gitstore"
	"github.com/m1nd/m1nd/mailbox"
	"github.com/m1nd/m1nd/memory"
	"github.com/m1nd/m1nd/ops"
	"github.com/m1nd/m1nd/testkit/gittest"
)

// scannedShop is a real repository "shop" holding files, committed on
// main and scanned at now, with its flows open. The process runs git
// (hooks, worktrees, merges) with the environment the repository was
// made with.
func scannedShop(t *testing.T, files map[string]string, now time.Time) (*gittest.Repo, *ops.Flows) {
	t.Helper()
	g := gittest.Init(t, "shop")
	g.CommitFiles("files", files)
	gittest.SetEnv(t)
	repo, err := gitstore.Open(g.Dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { repo.Close() })
	flows := ops.New(repo, "shop")
	if _, err := flows.Scan(context.Background(), brain.WriteRequest{Agent: "owner", Now: now}); err != nil {
		t.Fatal(err)
	}
	return g, flows
}

// repoOf, storeOf, boxOf and bookOf are b's parts (Flows.Parts).
func repoOf(b *ops.Flows) *gitstore.Repo  { r, _, _, _ := b.Parts(); return r }
func storeOf(b *ops.Flows) *brain.Store   { _, s, _, _ := b.Parts(); return s }
func boxOf(b *ops.Flows) *mailbox.Mailbox { _, _, m, _ := b.Parts(); return m }
func bookOf(b *ops.Flows) *memory.Book    { _, _, _, k := b.Parts(); return k }
