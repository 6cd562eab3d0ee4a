//go:build linux

package testscripts

import (
	"bytes"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/m1nd/m1nd/testkit/pty"
)

// atPTY runs cmd at a pseudo-terminal, its controlling terminal, and
// types what the screen asks for: answers reads the screen so far and
// returns every answer it calls for, in order, and each is typed once. It
// returns what the terminal showed, how many answers were typed, and how
// cmd exited; it fails the test after limit.
func atPTY(t *testing.T, cmd *exec.Cmd, limit time.Duration, answers func(screen string) []string) (string, int, error) {
	t.Helper()
	master, tty, err := pty.Open()
	if err != nil {
		t.Fatalf("pty: %v", err)
	}
	defer master.Close()
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, tty
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	tty.Close()
	var (
		mu     sync.Mutex
		screen bytes.Buffer
	)
	read := make(chan struct{})
	go func() {
		defer close(read)
		buf := make([]byte, 4096)
		for {
			n, err := master.Read(buf)
			mu.Lock()
			screen.Write(buf[:n])
			mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	typed := 0
	deadline := time.After(limit)
	for {
		select {
		case err := <-done:
			<-read
			return strings.ReplaceAll(screen.String(), "\r\n", "\n"), typed, err
		case <-deadline:
			cmd.Process.Kill()
			t.Fatalf("%s at a terminal: still running after %s; it showed:\n%s", strings.Join(cmd.Args, " "), limit, screen.String())
		case <-time.After(20 * time.Millisecond):
		}
		mu.Lock()
		asked := answers(screen.String())
		mu.Unlock()
		for ; typed < len(asked); typed++ {
			if _, err := master.Write([]byte(asked[typed] + "\n")); err != nil {
				t.Fatalf("type at the terminal: %v", err)
			}
		}
	}
}
