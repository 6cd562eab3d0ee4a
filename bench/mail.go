package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"time"

	"github.com/m1nd/m1nd/chain"
	"github.com/m1nd/m1nd/gitstore"
	"github.com/m1nd/m1nd/mailbox"
)

// benchMail measures the PostToolUse hook on a brain whose mailbox holds n
// letters from 20 writers, beside `git for-each-ref` over the same refs.
func benchMail(work, bin string, n, runs int) error {
	repoDir, err := newRepo(work, "mail")
	if err != nil {
		return err
	}
	if _, err := gitOut(repoDir, nil, "commit", "-q", "--allow-empty", "-m", "root"); err != nil {
		return err
	}
	repo, err := gitstore.Open(repoDir)
	if err != nil {
		return err
	}
	defer repo.Close()
	fmt.Fprintf(os.Stderr, "mail: writing %d letters …\n", n)
	base := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	heads := map[string]gitstore.Hash{}
	for i := 0; i < n; i++ {
		// Appended with the chain engine directly: Send's dedup check is
		// not what is measured here.
		l := &mailbox.Letter{TS: base.Add(time.Duration(i) * time.Second).Format(time.RFC3339), Agent: fmt.Sprintf("writer%02d", i%20),
			To: "bob", Class: "note", Brain: "mail", What: fmt.Sprintf("letter %d: the gate for block %d is green", i, i%50)}
		ref, _ := mailbox.Ref(l.To, l.Agent)
		c := chain.Chain{Repo: repo, Kind: mailbox.Kind, Ref: ref}
		h, err := c.Append(context.Background(), heads[ref], l.Canonical(), chain.Commit{Agent: l.Agent, When: base, Doc: l})
		if err != nil {
			return err
		}
		heads[ref] = h
	}
	hook := func() ([]byte, error) {
		cmd := exec.Command(bin, "hook", "claude", "PostToolUse", "--agent", "bob")
		cmd.Dir = repoDir
		cmd.Stdin = bytes.NewReader([]byte(`{"session_id":"s","hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{},"tool_response":{}}`))
		return cmd.Output()
	}
	// Drain the backlog once, as the first hook call says to: one bounded
	// batch, then the whole backlog read with one inbox listing and marked
	// read, then a hook call with nothing left to hand over. The steady
	// state after is what every tool call pays.
	start := time.Now()
	first, err := hook()
	if err != nil || !bytes.Contains(first, []byte("m1nd mail inbox --unread --limit 0")) {
		return fmt.Errorf("the first hook call after the backlog does not say how to read it: %v\n%s", err, first)
	}
	listing, err := m1ndRun(bin, repoDir, "mail", "inbox", "--agent", "bob", "--unread", "--limit", "0", "--json")
	if err != nil {
		return fmt.Errorf("mail inbox: %v: %.300s", err, listing)
	}
	if out, err := m1ndRun(bin, repoDir, "mail", "inbox", "--agent", "bob", "--mark-read", "--limit", "1"); err != nil {
		return fmt.Errorf("mail inbox --mark-read: %v: %s", err, out)
	}
	if out, err := hook(); err != nil || len(out) != 0 {
		return fmt.Errorf("after the backlog was read the hook handed over %q (%v)", out, err)
	}
	drain := time.Since(start)
	var shown struct {
		Letters []json.RawMessage `json:"letters"`
	}
	if err := json.Unmarshal(listing, &shown); err != nil {
		return fmt.Errorf("mail inbox --json: %v", err)
	}
	var idle, fresh, git []time.Duration
	for r := 0; r < runs+1; r++ {
		start := time.Now()
		if _, err := hook(); err != nil {
			return err
		}
		if r > 0 {
			idle = append(idle, time.Since(start))
		}
		l := &mailbox.Letter{TS: base.Add(time.Duration(n+r) * time.Second).Format(time.RFC3339), Agent: "writer00", To: "bob", Class: "note", Brain: "mail", What: fmt.Sprintf("news %d", r)}
		box := &mailbox.Mailbox{Repo: repo, Brain: "mail"}
		if _, err := box.Send(context.Background(), l); err != nil {
			return err
		}
		start = time.Now()
		out, err := hook()
		if err != nil || len(out) == 0 {
			return fmt.Errorf("hook delivered nothing new: %v", err)
		}
		if r > 0 {
			fresh = append(fresh, time.Since(start))
		}
		start = time.Now()
		if _, err := gitOut(repoDir, nil, "for-each-ref", chain.RefRoot+"mail/"); err != nil {
			return err
		}
		if r > 0 {
			git = append(git, time.Since(start))
		}
	}
	fmt.Printf("\n(d) the PostToolUse hook, %d letters from 20 writers in the box, %d runs\n", n, runs)
	fmt.Printf("  reading the backlog as the hook says (a batch, one inbox listing of %d unread, mark read, an empty hook call): %s (goal ≤ 2 s)\n", len(shown.Letters), ms(drain))
	printRow("m1nd hook claude PostToolUse, nothing new", idle)
	printRow("m1nd hook claude PostToolUse, one new letter", fresh)
	printRow("git for-each-ref refs/m1nd/mail/", git)
	fmt.Printf("    ratio m1nd (nothing new)/git (median): %.2fx\n", float64(median(idle))/float64(median(git)))
	addInfo("mail hook, nothing new", median(idle), median(git))
	summary = append(summary, summaryRow{fmt.Sprintf("mail backlog of %d read", n), ms(drain), "—", "—", "≤ 2000ms", yesNo(drain <= 2*time.Second)})
	return nil
}
