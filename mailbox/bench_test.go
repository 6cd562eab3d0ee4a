package mailbox

import (
	"context"
	"fmt"
	"testing"
)

// BenchmarkDeliver is the delivery cursor claim a hook makes on every tool
// call, on a box of 200 letters from 20 writers: nothing new (the common
// call: no lock taken), and one new letter claimed under the cursor's lock.
func BenchmarkDeliver(b *testing.B) {
	box, _ := newBox(b)
	ctx := context.Background()
	n := 0
	sendOne := func() {
		send(b, box, letter(fmt.Sprintf("writer%02d", n%20), "bob", "note", fmt.Sprintf("letter %d: the gate is green", n), n))
		n++
	}
	for n < 200 {
		sendOne()
	}
	all := Budget{Letters: 1000, Bytes: 1 << 30}
	if d, err := box.Deliver(ctx, "bob", Turn{}, all); err != nil || len(d.Letters) != 200 {
		b.Fatalf("first delivery: %v", err)
	}
	b.Run("nothing-new", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if d, err := box.Deliver(ctx, "bob", Turn{}, all); err != nil || len(d.Letters) != 0 {
				b.Fatalf("delivered %v: %v", d, err)
			}
		}
	})
	b.Run("claim-one", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			sendOne()
			b.StartTimer()
			if d, err := box.Deliver(ctx, "bob", Turn{}, Budget{Letters: 1, Bytes: 1 << 20}); err != nil || len(d.Letters) != 1 {
				b.Fatalf("delivered %v: %v", d, err)
			}
		}
	})
}
