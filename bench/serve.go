package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/m1nd/m1nd/internal/trayclient"
)

// benchServe starts the real `m1nd serve` on loopback over a brain of n
// missions with a scanned store, and loads the tray's heads view
// (GET /api/mailbox?kind=mission, what the tray's page reads) and its
// block view (GET /api/system_blocks) in turn, 8 connections each, for d
// per endpoint (in two alternating halves).
func benchServe(fx *fixtures, bin string, n int, d time.Duration) error {
	dir, err := fx.copyOf("serve", n)
	if err != nil {
		return err
	}
	if _, err := m1ndRun(bin, dir, "skeleton", "scan"); err != nil {
		return err
	}
	rec, stop, err := startOwner(bin, dir)
	if err != nil {
		return err
	}
	defer stop()
	addr := rec.Addr
	const conns = 8
	client := &http.Client{Transport: &http.Transport{MaxIdleConns: conns, MaxIdleConnsPerHost: conns, MaxConnsPerHost: conns}, Timeout: 30 * time.Second}
	heads := "http://" + addr + "/api/mailbox?kind=mission"
	blocks := "http://" + addr + "/api/system_blocks"
	for _, u := range []string{heads, blocks} { // warm both views (the head cache, the store)
		if _, err := load(client, u, 1, 0, 1); err != nil {
			return err
		}
	}
	fmt.Fprintf(os.Stderr, "serve: %d missions, %s per endpoint, %d connections …\n", n, d, conns)
	var h, b loadResult
	for half := 0; half < 2; half++ {
		r, err := load(client, heads, conns, d/2, 0)
		if err != nil {
			return err
		}
		h.add(r)
		if r, err = load(client, blocks, conns, d/2, 0); err != nil {
			return err
		}
		b.add(r)
	}
	fmt.Printf("\n(i) m1nd serve, %d missions, %d connections, %s per endpoint\n", n, conns, d)
	for _, row := range []struct {
		name string
		r    *loadResult
	}{{"GET /api/mailbox?kind=mission (the heads view)", &h}, {"GET /api/system_blocks (the anchor)", &b}} {
		fmt.Printf("  %-48s %8.0f req/s   p50 %8s   p99 %8s   (n=%d)\n", row.name, row.r.rate(), ms(percentile(row.r.lat, 0.5)), ms(percentile(row.r.lat, 0.99)), len(row.r.lat))
	}
	hp99, bp99 := percentile(h.lat, 0.99), percentile(b.lat, 0.99)
	summary = append(summary, summaryRow{fmt.Sprintf("serve heads %d, 8 conns", n),
		fmt.Sprintf("%.0f/s p99 %s", h.rate(), ms(hp99)), fmt.Sprintf("%.0f/s p99 %s", b.rate(), ms(bp99)),
		fmt.Sprintf("%.2f", h.rate()/b.rate()), "≥ 2000/s, p99 ≤ 20ms", yesNo(h.rate() >= 2000 && hp99 <= 20*time.Millisecond)})
	return nil
}

// startDaemon starts the real m1nd with args in dir, in a process group of
// its own; stop interrupts it, and kills the group after 5 s. exited says
// when it ended by itself.
func startDaemon(bin, dir string, args ...string) (stop func(), exited <-chan error, err error) {
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = io.Discard, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, nil, err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cmd.Process.Signal(os.Interrupt)
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
				<-done
			}
		})
	}
	return stop, done, nil
}

// startOwner starts `m1nd serve` on loopback in dir and returns its
// record (address and pid: its serve.json) once it answers.
func startOwner(bin, dir string) (rec trayclient.Record, stop func(), err error) {
	stop, exited, err := startDaemon(bin, dir, "serve", "--addr", "127.0.0.1:0")
	if err != nil {
		return trayclient.Record{}, nil, err
	}
	runtime := filepath.Join(dir, ".git", "m1nd")
	for deadline := time.Now().Add(10 * time.Second); ; {
		if rec, ok := trayclient.ReadRecord(runtime); ok && rec.Addr != "" {
			if _, err := http.Get("http://" + rec.Addr + "/api/policy"); err == nil {
				return rec, stop, nil
			}
		}
		select {
		case err := <-exited:
			return trayclient.Record{}, nil, fmt.Errorf("m1nd serve exited: %v", err)
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			stop()
			return trayclient.Record{}, nil, fmt.Errorf("m1nd serve wrote no %s in 10 s", trayclient.RecordFile)
		}
	}
}

// loadResult is what a load loop measured: every request's latency and
// the wall time they took.
type loadResult struct {
	lat     []time.Duration
	elapsed time.Duration
}

func (r *loadResult) add(o *loadResult) {
	r.lat = append(r.lat, o.lat...)
	r.elapsed += o.elapsed
}

func (r *loadResult) rate() float64 { return float64(len(r.lat)) / r.elapsed.Seconds() }

// load sends GET url from conns goroutines until d has passed (or, when d
// is 0, count requests each), reading every body whole; any answer but 200
// is an error.
func load(client *http.Client, url string, conns int, d time.Duration, count int) (*loadResult, error) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var mu sync.Mutex
	res := &loadResult{}
	var firstErr error
	var wg sync.WaitGroup
	start := time.Now()
	stop := start.Add(d)
	for c := 0; c < conns; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var lat []time.Duration
			for i := 0; d > 0 && time.Now().Before(stop) || d == 0 && i < count; i++ {
				t := time.Now()
				err := get(ctx, client, url)
				if err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = err
						cancel()
					}
					mu.Unlock()
					return
				}
				lat = append(lat, time.Since(t))
			}
			mu.Lock()
			res.lat = append(res.lat, lat...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	res.elapsed = time.Since(start)
	return res, firstErr
}

func get(ctx context.Context, client *http.Client, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return nil
}
