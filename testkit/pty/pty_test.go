//go:build linux

package pty

import (
	"io"
	"os/exec"
	"strings"
	"testing"
)

// TestOpen: a child on the terminal end sees a terminal, and what it
// writes reaches the master.
func TestOpen(t *testing.T) {
	master, tty, err := Open()
	if err != nil {
		t.Fatal(err)
	}
	defer master.Close()
	cmd := exec.Command("sh", "-c", `test -t 0 && test -t 1 && echo on-a-terminal`)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, tty
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	tty.Close()
	var out strings.Builder
	done := make(chan struct{})
	go func() { io.Copy(&out, master); close(done) }()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("the child saw no terminal: %v", err)
	}
	<-done
	if !strings.Contains(out.String(), "on-a-terminal") {
		t.Errorf("the master read %q", out.String())
	}
}
