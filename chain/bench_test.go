package chain_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/m1nd/m1nd/chain"
	"github.com/m1nd/m1nd/gitstore"
	"github.com/m1nd/m1nd/testkit/gittest"
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
	b.ReportAllocs()
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
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		view, err := m.Heads(context.Background(), "")
		if err != nil || len(view.Missions) != 1000 {
			b.Fatal(err)
		}
	}
}

// BenchmarkDocs reads one chain of 500 letters through its docs index
// (cache/docs-v1 in the runtime dir): a hit, the index extended by the one
// letter appended since, and a rebuild from scratch (the index removed).
func BenchmarkDocs(b *testing.B) {
	m := benchMissions(b)
	l := first("bench", "msn_0000000000dd")
	post := func(l *chain.Letter) {
		if _, err := m.Post(context.Background(), chain.PostRequest{Body: l.Canonical(), Agent: "bench"}); err != nil {
			b.Fatal(err)
		}
	}
	post(l)
	seq := 0
	next := func() {
		seq++
		l = chain.Next(l, l.ID(), t0.Add(time.Duration(seq)*time.Second))
		l.Phase = "executing"
		post(l)
	}
	for i := 1; i < 500; i++ {
		next()
	}
	c := chain.Chain{Repo: m.Repo, Kind: chain.MissionKind, Ref: "refs/m1nd/missions/msn_0000000000dd"}
	docs := func(want int) {
		head, ok, err := m.Repo.ReadRef(c.Ref)
		if err != nil || !ok {
			b.Fatal(ok, err)
		}
		got, err := c.Docs(head)
		if err != nil || len(got) != want {
			b.Fatalf("%d docs, want %d: %v", len(got), want, err)
		}
	}
	docs(500) // builds the index
	b.Run("hit", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			docs(500)
		}
	})
	b.Run("extend-by-one", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			next()
			b.StartTimer()
			docs(seq + 1)
		}
	})
	b.Run("rebuild", func(b *testing.B) {
		index := filepath.Join(m.Repo.RuntimeDir(), "cache", "docs-v1")
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			if err := os.RemoveAll(index); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			docs(seq + 1)
		}
	})
}
