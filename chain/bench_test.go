package chain_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/m1nd/m1nd/chain"
	"github.com/m1nd/m1nd/gitstore"
	"github.com/m1nd/m1nd/internal/gittest"
)

func benchMissions(b *testing.B) *chain.Missions {
	b.Helper()
	g := gittest.Init(b, "bench")
	repo, err := gitstore.Open(g.Dir)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { repo.Close() })
	return &chain.Missions{Repo: repo, Brain: "bench"}
}

// BenchmarkPost appends letters to one chain in-process: decode, validate,
// read the head, write blob+tree+commit, compare-and-swap the ref.
func BenchmarkPost(b *testing.B) {
	m := benchMissions(b)
	l := first("bench", "msn_0000000000aa")
	if _, err := m.Post(context.Background(), chain.PostRequest{Body: l.Canonical(), Agent: "bench"}); err != nil {
		b.Fatal(err)
	}
	bodies := make([][]byte, b.N)
	for i := range bodies {
		l = chain.Next(l, l.ID(), t0.Add(time.Duration(i+1)*time.Second))
		l.Phase = "executing"
		bodies[i] = l.Canonical()
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := m.Post(context.Background(), chain.PostRequest{Body: bodies[i], Agent: "bench"}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkHeads reads every head of 1,000 missions.
func BenchmarkHeads(b *testing.B) {
	m := benchMissions(b)
	for i := 0; i < 1000; i++ {
		l := first("bench", fmt.Sprintf("msn_%012x", i))
		if _, err := m.Post(context.Background(), chain.PostRequest{Body: l.Canonical(), Agent: "bench"}); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		view, err := m.Heads(context.Background(), "")
		if err != nil || len(view.Missions) != 1000 {
			b.Fatal(err)
		}
	}
}
