package main

import (
	"bufio"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// clockTicks is the kernel's USER_HZ, the unit of /proc/<pid>/stat's times
// (100 on every Linux this runs on).
const clockTicks = 100

// benchTrayIdle: the tray left open on a brain of n missions, as m1nd
// keeps its refs (written loose, then one post): `m1nd serve` with one
// event stream connected, as a page holds it, and nothing moving. The
// row is the CPU the owner process spends over d, as a share of a core
// (goal: under 1%).
func benchTrayIdle(fx *fixtures, bin string, n int, d time.Duration) error {
	dir, err := fx.copyOf("tray-idle", n)
	if err != nil {
		return err
	}
	letter := filepath.Join(fx.work, "tray-idle-letter.json")
	if err := os.WriteFile(letter, letters(benchBrain, 1)[0], 0o644); err != nil {
		return err
	}
	if out, err := m1ndRun(bin, dir, "mission", "post", letter); err != nil {
		return fmt.Errorf("mission post: %v: %s", err, out)
	}
	// The owner's record names the pid that serves: the small m1nd
	// hands serve to m1nd-full by exec, in the same process.
	rec, stop, err := startOwner(bin, dir)
	if err != nil {
		return err
	}
	defer stop()
	addr := rec.Addr
	resp, err := http.Get("http://" + addr + "/api/events")
	if err != nil {
		return fmt.Errorf("event stream: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("event stream: %s", resp.Status)
	}
	go bufio.NewReader(resp.Body).WriteTo(discard{})
	fmt.Fprintf(os.Stderr, "tray-idle: %d missions, one event stream, %s …\n", n, d)
	time.Sleep(2 * time.Second) // the first listing and the page's first reads
	before, err := cpuTicks(rec.PID)
	if err != nil {
		return err
	}
	time.Sleep(d)
	after, err := cpuTicks(rec.PID)
	if err != nil {
		return err
	}
	share := float64(after-before) / clockTicks / d.Seconds()
	fmt.Printf("\n(k) the tray left open, %d missions, nothing moving, one event stream\n", n)
	fmt.Printf("  m1nd serve spent %.2f s of CPU in %s: %.2f%% of a core (goal < 1%%)\n", float64(after-before)/clockTicks, d, 100*share)
	summary = append(summary, summaryRow{fmt.Sprintf("tray idle, %d missions", n), fmt.Sprintf("%.2f%% core", 100*share), "—", "—", "< 1%", yesNo(share < 0.01)})
	return nil
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// cpuTicks is the user and system time pid has spent, in clock ticks.
func cpuTicks(pid int) (int64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The fields after the command name, which may hold spaces, in ")".
	rest := string(data[strings.LastIndexByte(string(data), ')')+2:])
	f := strings.Fields(rest)
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f))
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("/proc/%d/stat: %q %q", pid, f[11], f[12])
	}
	return utime + stime, nil
}
