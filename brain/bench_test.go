package brain

import (
	"context"
	"fmt"
	"testing"

	"github.com/m1nd/m1nd/gitstore"
	"github.com/m1nd/m1nd/rules"
	"github.com/m1nd/m1nd/testkit/gittest"
)

// benchStore is a scanned store of n blocks.
func benchStore(b *testing.B, n int) *Store {
	b.Helper()
	g := gittest.Init(b, "bench")
	files := map[string]string{}
	for i := 0; i < n; i++ {
		files[fmt.Sprintf("part%03d/a.go", i)] = "package p\n"
	}
	g.CommitFiles("parts", files)
	repo, err := gitstore.Open(g.Dir)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { repo.Close() })
	s := &Store{Repo: repo, Brain: "bench"}
	if _, err := s.Scan(context.Background(), write(0)); err != nil {
		b.Fatal(err)
	}
	return s
}

// BenchmarkImportReceipt: one store mutation (read, check, write, CAS) on a
// store of 50 blocks.
func BenchmarkImportReceipt(b *testing.B) {
	s := benchStore(b, 50)
	receipt := []byte(testReceipt("sb_bench_part007", 1, 0))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := s.ImportReceipt(context.Background(), importReq(int64(i+1), "sb_bench_part007", string(receipt), rules.OriginHumanTTY)); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSnapshot: reading the whole current store of 50 blocks.
func BenchmarkSnapshot(b *testing.B) {
	s := benchStore(b, 50)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, _, err := s.Snapshot(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCheckLetterBlock: what the block guard adds to a mission post.
func BenchmarkCheckLetterBlock(b *testing.B) {
	s := benchStore(b, 50)
	candidate := &rules.Receipt{BlockID: "sb_bench_part042", Scope: rules.Scope{BoundaryVersion: 1, ContractVersion: 1}}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := s.CheckLetterBlock("sb_bench_part042", candidate); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEdit: one candidate_edit batch (a rename) on a store of 50 blocks.
func BenchmarkEdit(b *testing.B) {
	s := benchStore(b, 50)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		ops := fmt.Sprintf(`[{"op":"rename","block_id":"sb_bench_part007","name":"part %d"}]`, i)
		if _, err := s.Edit(context.Background(), EditRequest{WriteRequest: write(int64(i + 1)), Seat: SeatOwner, Ops: []byte(ops)}); err != nil {
			b.Fatal(err)
		}
	}
}
