package trayclient

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// gonePID is the pid of a process that has exited (and been reaped).
func gonePID(t *testing.T) int {
	t.Helper()
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	return gone.Process.Pid
}

// An owner's record names it only while the process that wrote it runs: a
// killed owner's serve.json is not an owner.
func TestFindOwnerTrustsOnlyALiveRecord(t *testing.T) {
	dir := t.TempDir()
	if got := Find(dir); got != "" {
		t.Fatalf("no record: %q", got)
	}
	remove, err := Claim(dir, Record{Addr: "127.0.0.1:7420", PID: os.Getpid(), Brain: "shop"})
	if err != nil {
		t.Fatal(err)
	}
	if got := Find(dir); got != "http://127.0.0.1:7420" {
		t.Fatalf("a live owner's record: %q", got)
	}
	remove()
	if _, err := os.Stat(filepath.Join(dir, RecordFile)); !os.IsNotExist(err) {
		t.Fatalf("remove left the record: %v", err)
	}
	writeRecord(t, dir, Record{Addr: "127.0.0.1:7420", PID: gonePID(t), Brain: "shop"})
	if got := Find(dir); got != "" {
		t.Fatalf("the record of a process that exited: %q", got)
	}
	writeRecord(t, dir, Record{Addr: "127.0.0.1:7420", Brain: "shop"})
	if got := Find(dir); got != "" {
		t.Fatalf("a record without a pid: %q", got)
	}
}

// One owner per repository: a second claim while the first owner runs
// (its process alive, its address answering) is refused naming it, and
// leaves its record as it was; a record whose address does not answer, or
// a killed owner's, is taken over; removing a record that another
// owner has since written leaves that one in place.
func TestClaimRecordOneOwner(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, RecordFile)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	addr := ln.Addr().String()
	first := Record{Addr: addr, PID: os.Getpid(), Brain: "shop"}
	removeFirst, err := Claim(dir, first)
	if err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(path)
	_, err = Claim(dir, Record{Addr: "127.0.0.1:7555", PID: os.Getpid(), Brain: "shop"})
	var running *ErrRunning
	if !errors.As(err, &running) || running.Record != first || err.Error() != fmt.Sprintf("an owner already runs for this repository at http://%s/ (pid %d)", addr, os.Getpid()) {
		t.Fatalf("a second owner: %v", err)
	}
	if after, _ := os.ReadFile(path); string(after) != string(before) {
		t.Fatalf("the refused claim changed the record: %s", after)
	}
	removeFirst()

	// A live pid whose address no longer answers (a pid reused by another
	// process) is no owner: its record is taken over.
	ln.Close()
	writeRecord(t, dir, first)
	removeReused, err := Claim(dir, Record{Addr: "127.0.0.1:7558", PID: os.Getpid(), Brain: "shop"})
	if err != nil {
		t.Fatalf("a record whose address does not answer: %v", err)
	}
	removeReused()

	writeRecord(t, dir, Record{Addr: "127.0.0.1:7420", PID: gonePID(t), Brain: "shop"})
	taker := Record{Addr: "127.0.0.1:7556", PID: os.Getpid(), Brain: "shop"}
	removeTaker, err := Claim(dir, taker)
	if err != nil {
		t.Fatalf("a killed owner's record is taken over: %v", err)
	}
	if rec, ok := ReadRecord(dir); !ok || rec != taker {
		t.Fatalf("after the take-over: %+v %v", rec, ok)
	}
	// Another owner's record replaced this one (by hand, say): removing
	// this owner's record leaves that one.
	other := Record{Addr: "127.0.0.1:7557", PID: os.Getpid(), Brain: "shop"}
	writeRecord(t, dir, other)
	removeTaker()
	if rec, ok := ReadRecord(dir); !ok || rec != other {
		t.Fatalf("remove took another owner's record: %+v %v", rec, ok)
	}
	if matches, _ := filepath.Glob(filepath.Join(dir, "*.tmp")); len(matches) != 0 {
		t.Fatalf("left behind: %v", matches)
	}
}

// writeRecord writes an owner's record as a killed owner left it.
func writeRecord(t *testing.T, dir string, rec Record) {
	t.Helper()
	data, _ := json.Marshal(rec)
	if err := os.WriteFile(filepath.Join(dir, RecordFile), data, 0o600); err != nil {
		t.Fatal(err)
	}
}
