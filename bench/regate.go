package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/m1nd/m1nd/chain"
	"github.com/m1nd/m1nd/gitstore"
	"github.com/m1nd/m1nd/testkit/pty"
)

// regateGate is the gate of the regate row: a fifth of a second of work,
// as a small test suite takes.
const regateGate = "sleep 0.2; test -f README.md"

// benchRegate is a landing whose target moved (issue 25), whole, with the
// real serve and runnerd: a mission waits ready at merge_wait; main moves
// on; runnerd's queue merges main into the branch and runs the gate on the
// merge in a worktree of its own; the mission is landed at a terminal as
// soon as it is ready again (`m1nd land`, the block id typed). Timed from
// main's move to the landing's exit, against the gate's own time (the
// same command in the same tree, one process). The goal: at most 150 ms
// beyond the gate.
func benchRegate(work, bin string, runs int) error {
	dir := filepath.Join(work, "regate")
	if out, err := exec.Command("git", "init", "-q", "-b", "main", dir).CombinedOutput(); err != nil {
		return fmt.Errorf("git init: %v: %s", err, out)
	}
	git := func(args ...string) (string, error) {
		out, err := gitstore.Git(context.Background(), dir, args...)
		return strings.TrimSpace(out), err
	}
	files := map[string]string{"README.md": "# regate\n", "core/a.go": "package core\n"}
	for name, body := range files {
		os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755)
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			return err
		}
	}
	for _, args := range [][]string{{"add", "-A"}, {"-c", "user.name=bench", "-c", "user.email=bench@m1nd", "commit", "-qm", "init"}} {
		if _, err := git(args...); err != nil {
			return err
		}
	}
	for _, args := range [][]string{{"init"}, {"skeleton", "scan"}} {
		if _, err := m1ndRun(bin, dir, args...); err != nil {
			return err
		}
	}
	agent := filepath.Join(work, "regate-agent.sh")
	if err := os.WriteFile(agent, []byte("echo \"$M1ND_MISSION\" > \"core/$M1ND_MISSION.txt\" && git add -A && git -c user.name=agent -c user.email=agent@m1nd commit -qm work\n"), 0o755); err != nil {
		return err
	}
	cfg := fmt.Sprintf("[[runner]]\nid = \"b1\"\ncapability = \"build-runner\"\ncommand = [\"sh\", %q, \"{packet_file}\"]\ngate_command = %q\nworkspace_allowlist = [%q]\n", agent, regateGate, work)
	if err := os.WriteFile(filepath.Join(dir, ".git", "m1nd", "runners.toml"), []byte(cfg), 0o600); err != nil {
		return err
	}
	// The human approves b1's pin and runnerd's key, at a terminal.
	if err := atTerminal(bin, dir, "b1", "runners", "approve"); err != nil {
		return err
	}
	packet := filepath.Join(work, "regate-packet.md")
	if err := os.WriteFile(packet, []byte("## What should change?\n\nadd a file to core\n"), 0o644); err != nil {
		return err
	}
	_, stopOwner, err := startOwner(bin, dir)
	if err != nil {
		return err
	}
	defer stopOwner()
	stopRunner, _, err := startDaemon(bin, dir, "runnerd", "--addr", "127.0.0.1:0", "--announce-interval", "100ms")
	if err != nil {
		return err
	}
	defer stopRunner()
	repo, err := gitstore.Open(dir)
	if err != nil {
		return err
	}
	defer repo.Close()
	missions := &chain.Missions{Repo: repo, Brain: "regate"}

	fmt.Fprintf(os.Stderr, "regate: %d landings whose target moved, gate %q …\n", runs, regateGate)
	var landed, readied, gated []time.Duration
	for i := 0; i < runs; i++ {
		id, err := spawnMission(bin, dir, packet)
		if err != nil {
			return err
		}
		if err := waitReady(missions, git, id, 30*time.Second); err != nil {
			return err
		}
		// main moves on, as another landing moves it.
		name := fmt.Sprintf("main-%03d.txt", i)
		if err := os.WriteFile(filepath.Join(dir, name), []byte("moved on\n"), 0o644); err != nil {
			return err
		}
		t0 := time.Now()
		if _, err := git("add", name); err != nil {
			return err
		}
		if _, err := git("-c", "user.name=bench", "-c", "user.email=bench@m1nd", "commit", "-qm", "main moves on"); err != nil {
			return err
		}
		if err := waitReady(missions, git, id, 30*time.Second); err != nil {
			return err
		}
		ready := time.Since(t0)
		if err := landAtTerminal(bin, dir, id, "sb_regate_core"); err != nil {
			return err
		}
		landed, readied = append(landed, time.Since(t0)), append(readied, ready)

		// The anchor: the gate alone, in the tree it passed on.
		g0 := time.Now()
		gate := exec.Command("sh", "-c", regateGate)
		gate.Dir = dir
		if out, err := gate.CombinedOutput(); err != nil {
			return fmt.Errorf("the gate alone: %v: %s", err, out)
		}
		gated = append(gated, time.Since(g0))
	}
	fmt.Printf("\n(j) a landing whose target moved: main moves, runnerd re-gates the merge, m1nd land at a terminal\n")
	printRow("main moved → landed (m1nd)", landed)
	printRow("  of which main moved → ready again", readied)
	printRow("the gate alone (the anchor)", gated)
	beyond := median(landed) - median(gated)
	fmt.Printf("    beyond the gate (medians): %s (goal ≤ 150ms)\n", ms(beyond))
	summary = append(summary, summaryRow{"land, target moved", ms(median(landed)), ms(median(gated)),
		fmt.Sprintf("%.2f", float64(median(landed))/float64(median(gated))), "≤ gate + 150ms", yesNo(beyond <= 150*time.Millisecond)})
	return nil
}

// spawnMission spawns a mission on runner b1, trying again while the
// runner has not yet announced itself to the owner.
func spawnMission(bin, dir, packet string) (string, error) {
	deadline := time.Now().Add(20 * time.Second)
	for {
		out, err := m1ndRun(bin, dir, "spawn", "--runner", "b1", "--block", "sb_regate_core", "--packet", packet, "--json")
		if err == nil {
			var reply struct {
				MissionID string `json:"mission_id"`
			}
			if err := json.Unmarshal(out, &reply); err != nil || reply.MissionID == "" {
				return "", fmt.Errorf("spawn replied %s", out)
			}
			return reply.MissionID, nil
		}
		if time.Now().After(deadline) {
			return "", err
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// waitReady waits until mission id is at merge_wait with its gate having
// tested its branch's tip, which holds main: what the tray shows ready.
func waitReady(m *chain.Missions, git func(...string) (string, error), id string, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for ; time.Now().Before(deadline); time.Sleep(2 * time.Millisecond) {
		head, err := m.Current(id)
		if err != nil || head.Letter.Phase != chain.PhaseMergeWait || head.Letter.ReceiptCandidate == nil {
			if err == nil && head.Letter.Phase == chain.PhaseFailed {
				return fmt.Errorf("mission %s failed: %+v", id, head.Letter.Verdict)
			}
			continue
		}
		tested, _ := head.Letter.ReceiptCandidate.Evidence.Tested()
		if tip, _ := git("rev-parse", "refs/heads/m1nd/"+id); tip != tested {
			continue
		}
		if _, err := git("merge-base", "--is-ancestor", "refs/heads/main", tested); err == nil {
			return nil
		}
	}
	head, err := m.Current(id)
	if err != nil {
		return fmt.Errorf("mission %s was not ready in %v: %w", id, limit, err)
	}
	return fmt.Errorf("mission %s was not ready in %v: at %s (%+v)", id, limit, head.Letter.Phase, head.Letter.Verdict)
}

// landAtTerminal runs `m1nd land id` on a pseudo-terminal with typed
// already typed, and fails unless it exits 0.
func landAtTerminal(bin, dir, id, typed string) error {
	return atTerminal(bin, dir, typed, "land", id)
}

// atTerminal runs m1nd with args on a pseudo-terminal with typed already
// typed, as a human answers a gesture's prompt, and fails unless it
// exits 0.
func atTerminal(bin, dir, typed string, args ...string) error {
	master, tty, err := pty.Open()
	if err != nil {
		return err
	}
	defer master.Close()
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, tty
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if _, err := master.Write([]byte(typed + "\n")); err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	tty.Close()
	var screen bytes.Buffer
	read := make(chan struct{})
	go func() { io.Copy(&screen, master); close(read) }()
	err = cmd.Wait()
	<-read
	if err != nil {
		return fmt.Errorf("m1nd %s: %v\n%s", strings.Join(args, " "), err, screen.String())
	}
	return nil
}
