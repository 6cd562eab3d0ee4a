package session

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
)

// Stat is the part of /proc/<pid>/stat the registry reads.
type Stat struct {
	Comm  string // field 2, without its parentheses
	State byte   // field 3: R, S, D, Z (a zombie: exited, not yet reaped), …
	PPID  int    // field 4
	Start uint64 // field 22: start time, clock ticks after boot
}

// ParseStat reads a /proc/<pid>/stat line. The command name (field 2) is
// in parentheses and may itself hold spaces and parentheses, so the
// fields after it are counted from its last ')'.
func ParseStat(data []byte) (Stat, error) {
	open := bytes.IndexByte(data, '(')
	end := bytes.LastIndexByte(data, ')')
	if open < 0 || end < open {
		return Stat{}, errors.New("proc stat: no (comm)")
	}
	st := Stat{Comm: string(data[open+1 : end])}
	// After ") ": field 3 (state) is rest[0], field 4 (ppid) rest[1],
	// field 22 (starttime) rest[19].
	rest := bytes.Fields(data[end+1:])
	if len(rest) < 20 {
		return Stat{}, fmt.Errorf("proc stat: %d fields after the command, want at least 20", len(rest))
	}
	ppid, err := strconv.Atoi(string(rest[1]))
	if err != nil || ppid < 0 {
		return Stat{}, fmt.Errorf("proc stat: ppid %q", rest[1])
	}
	start, err := strconv.ParseUint(string(rest[19]), 10, 64)
	if err != nil {
		return Stat{}, fmt.Errorf("proc stat: start time %q", rest[19])
	}
	st.PPID, st.Start = ppid, start
	if len(rest[0]) > 0 {
		st.State = rest[0][0]
	}
	return st, nil
}

// procRoot is where the process table is read; tests never change it, but
// naming it keeps the one Linux assumption in one place.
const procRoot = "/proc"

// ReadStat reads one process's stat.
func ReadStat(pid int) (Stat, error) {
	if pid <= 0 {
		return Stat{}, fmt.Errorf("no process %d", pid)
	}
	data, err := os.ReadFile(fmt.Sprintf("%s/%d/stat", procRoot, pid))
	if err != nil {
		return Stat{}, err
	}
	return ParseStat(data)
}

// Alive reports whether p still runs: a process with its pid exists, is
// not a zombie, and started when p did (a pid the kernel reused is another
// process). Where
// there is no /proc, nothing is known alive.
func Alive(p Proc) bool {
	if p.PID <= 0 {
		return false
	}
	st, err := ReadStat(p.PID)
	// A zombie (or a dead process, X) has exited: its table entry waits
	// only for its parent to reap it.
	return err == nil && st.Start == p.Start && st.State != 'Z' && st.State != 'X'
}

// wrapper reports whether comm is one of the programs a host may run a hook command through (Codex
// runs "$SHELL -lc COMMAND"; Claude Code a shell too): they are not the
// session's process.
func wrapper(comm string) bool {
	switch comm {
	case "sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "fish", "tcsh", "csh", "busybox", "env", "timeout":
		return true
	}
	return false
}

// HostProcess is the process that runs the hook: the first ancestor of
// the hook process (whose parent is parent) that is not a shell or a
// wrapper.
func HostProcess(parent int) (Proc, error) {
	pid := parent
	for range 16 {
		st, err := ReadStat(pid)
		if err != nil {
			return Proc{}, err
		}
		if !wrapper(st.Comm) || st.PPID <= 1 {
			return Proc{PID: pid, Start: st.Start, Command: st.Comm}, nil
		}
		pid = st.PPID
	}
	return Proc{}, fmt.Errorf("no host process above pid %d: only shells", parent)
}
