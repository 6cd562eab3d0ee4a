package gitstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// ErrRefLocked is returned when another writer held the ref's lock for
// longer than the lock timeout.
var ErrRefLocked = errors.New("ref is locked by another writer")

// DefaultLockTimeout is how long UpdateRef waits for another writer's
// <ref>.lock to go away. git's own default (core.filesRefLockTimeout) is
// 100 ms; m1nd waits longer because agents post in bursts.
const DefaultLockTimeout = 2 * time.Second

// UpdateRef moves ref name from old to new with git's lockfile protocol:
// create <ref>.lock exclusively (waiting while another writer holds it),
// verify the current value (loose, else packed) equals old, then, still
// holding the lock, rename a synced file holding the new value over the
// ref, and remove the lock. old == ZeroHash means "must not exist". A
// mismatch is a *StaleRefError and leaves the ref untouched; the lock is
// always removed.
//
// The lock file says, for as long as it exists, which process holds it
// ("m1nd-pid <pid> <boot id>"): its contents are never the ref's value, so
// a lock left by an m1nd process that was killed at any point is
// recognisable, and the next writer clears it (git never reads lock
// contents, and a lock without m1nd's stamp, which git may hold, is never
// cleared). The value file is synced before the rename: a post is durable
// when reported.
func (r *Repo) UpdateRef(ctx context.Context, name string, old, new Hash) error {
	if !ValidRefName(name) {
		return fmt.Errorf("update ref: invalid ref name %q", name)
	}
	if new.IsZero() {
		return fmt.Errorf("update %s: refusing to write the zero hash", name)
	}
	path := filepath.Join(r.commonDir, filepath.FromSlash(name))
	if err := r.mkdirShared(filepath.Dir(path)); err != nil {
		return fmt.Errorf("update %s: %w", name, err)
	}
	lock := path + ".lock"
	for attempt := 0; ; attempt++ {
		err := acquireLock(ctx, lock, r.tmpDir(), r.LockTimeout)
		if err == nil {
			break
		}
		// git prunes a ref folder it emptied (pack-refs, a deletion): make
		// it again and retry, as git does.
		if errors.Is(err, fs.ErrNotExist) && attempt < 5 {
			if err := r.mkdirShared(filepath.Dir(path)); err != nil {
				return fmt.Errorf("update %s: %w", name, err)
			}
			continue
		}
		return fmt.Errorf("update %s: %w", name, err)
	}
	defer os.Remove(lock)
	cur, ok, err := readLooseRef(path)
	if err != nil {
		return fmt.Errorf("update %s: %w", name, err)
	}
	if !ok {
		if cur, _, err = r.packedRef(name); err != nil {
			return fmt.Errorf("update %s: %w", name, err)
		}
	}
	if cur != old {
		return &StaleRefError{Ref: name, Expected: old, Actual: cur}
	}
	// The new value goes in through a file of its own, renamed over the
	// ref while the lock (still stamped with this process) is held; the
	// lock is removed after. A writer killed at any point leaves either a
	// stamped lock, which the next writer clears, or nothing.
	value, err := r.refValueFile(new)
	if err != nil {
		return fmt.Errorf("update %s: %w", name, err)
	}
	if err := os.Rename(value, path); err != nil {
		os.Remove(value)
		return fmt.Errorf("update %s: commit: %w", name, err)
	}
	return nil
}

// tmpDir is the runtime folder's tmp/: the same file system as the refs,
// and outside refs/, so git never takes a leftover there for a ref. A
// process runnerd contains writes its lock stamps and ref values in a
// folder of its own inside the runtime folder instead (RuntimeTmpEnv): it
// may not write the shared one, where it could swap another writer's
// value file before that writer renames it into place.
func (r *Repo) tmpDir() string {
	if own := os.Getenv(RuntimeTmpEnv); own != "" && filepath.IsAbs(own) && strings.HasPrefix(filepath.Clean(own), r.RuntimeDir()+string(filepath.Separator)) {
		return filepath.Clean(own)
	}
	return filepath.Join(r.RuntimeDir(), "tmp")
}

// RuntimeTmpEnv names, for a contained process, its own temporary folder
// inside the runtime folder (see tmpDir).
const RuntimeTmpEnv = "M1ND_RUNTIME_TMP"

// refValueFile writes h as a ref file's contents into a temporary file in
// the runtime folder (the same file system as the refs, outside refs/ so
// git never reads a leftover as a ref), synced and with git's mode.
func (r *Repo) refValueFile(h Hash) (string, error) {
	dir := r.tmpDir()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	name := filepath.Join(dir, fmt.Sprintf("ref-%d-%d", os.Getpid(), rand.Uint64()))
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
	if err != nil {
		return "", err
	}
	_, err = f.WriteString(h.String() + "\n")
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = r.adjustShared(name)
	}
	if err != nil {
		os.Remove(name)
		return "", err
	}
	return name, nil
}

// acquireLock creates path exclusively, stamped with this process from its
// first instant, backing off with jitter while another writer holds it, up
// to timeout. A lock abandoned by a killed m1nd is cleared (see lockIsDead).
// tmpDir is a folder on the same file system, outside refs/, where the
// stamped file is prepared.
func acquireLock(ctx context.Context, path, tmpDir string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	backoff := time.Millisecond
	for {
		err := createStamped(path, tmpDir)
		if err == nil {
			return nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("create lock: %w", err)
		}
		if cleared, err := clearDeadLock(path, tmpDir); err != nil {
			return err
		} else if cleared {
			continue
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%w (%s exists; if no git or m1nd process is running, remove it)", ErrRefLocked, path)
		}
		sleep := backoff/2 + rand.N(backoff)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(sleep):
		}
		if backoff < 50*time.Millisecond {
			backoff *= 2
		}
	}
}

// createStamped creates path exclusively with this process's stamp already
// in it: the stamp is written to a file in tmpDir and hard-linked into
// place, so an m1nd lock is never empty, not even for an instant. An empty
// lock is therefore never m1nd's (git holds one while it deletes a ref) and
// is never cleared. Where hard links fail, the lock is created and stamped
// in two steps.
func createStamped(path, tmpDir string) error {
	stamp, err := newStamp(tmpDir)
	if err != nil {
		return err
	}
	defer os.Remove(stamp)
	return lockWithStamp(stamp, path)
}

// newStamp writes this process's stamp into a fresh file in tmpDir, to be
// hard-linked into place as one or many locks (lockWithStamp); the caller
// removes it.
func newStamp(tmpDir string) (string, error) {
	if err := os.MkdirAll(tmpDir, 0o700); err != nil {
		return "", err
	}
	stamp := filepath.Join(tmpDir, fmt.Sprintf("lock-%d-%d", os.Getpid(), rand.Uint64()))
	if err := os.WriteFile(stamp, []byte(ownStamp()), 0o666); err != nil {
		return "", err
	}
	return stamp, nil
}

// lockWithStamp creates the lock at path exclusively as a hard link of
// stamp, so it is never empty; where hard links fail it is created and
// stamped in two steps. An existing lock is fs.ErrExist.
func lockWithStamp(stamp, path string) error {
	err := os.Link(stamp, path)
	if err == nil || errors.Is(err, fs.ErrExist) {
		return err
	}
	f, ferr := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
	if ferr != nil {
		return ferr
	}
	_, werr := f.WriteString(ownStamp())
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		os.Remove(path)
		return fmt.Errorf("stamp lock: %w", werr)
	}
	return nil
}

const stampPrefix = "m1nd-pid "

// ownStamp is what an m1nd-held lock says while it is held.
func ownStamp() string {
	return fmt.Sprintf("%s%d %s\n", stampPrefix, os.Getpid(), bootID())
}

// bootID distinguishes this boot from earlier ones, so a pid recorded
// before a reboot is never mistaken for a live process. It is read once per
// process: it cannot change while the process runs.
var bootID = sync.OnceValue(func() string {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return "-"
	}
	return strings.TrimSpace(string(b))
})

// lockIsDead reports whether the lock at path was abandoned: an m1nd stamp
// of a process that is not running on this boot. Any other lock — empty
// (git holds one while it deletes a ref, for as long as its hooks run) or
// holding a ref value — may belong to a live git and is never judged dead.
func lockIsDead(path string) bool {
	f, err := OpenRegular(path)
	if err != nil {
		return false // a FIFO or a device is no lock m1nd made: never cleared, never read
	}
	defer f.Close()
	var buf [256]byte
	n, _ := f.Read(buf[:])
	return n > 0 && stampIsDead(buf[:n])
}

// stampIsDead reports whether a lock's contents are an m1nd stamp of a
// process that is not running on this boot.
func stampIsDead(content []byte) bool {
	rest, ok := bytes.CutPrefix(content, []byte(stampPrefix))
	if !ok {
		return false // git's lock, or ours after the value was written: not ours to judge
	}
	fields := strings.Fields(string(rest))
	if len(fields) != 2 {
		return false
	}
	pid, err := strconv.Atoi(fields[0])
	if err != nil || pid <= 0 {
		return false
	}
	if fields[1] != bootID() {
		return true // stamped before a reboot
	}
	if pid == os.Getpid() {
		return false
	}
	return ProcessGone(pid)
}

// ProcessGone reports whether no process with pid runs on this machine
// (kill(pid, 0) answers ESRCH); a process of another user still counts as
// running. A pid recorded before a reboot may name another process now.
func ProcessGone(pid int) bool {
	return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}

// clearDeadLock removes path if it was abandoned (see lockIsDead).
// Breakers serialise on <lock>.break.lock, so that two writers finding the
// same dead lock cannot remove the live lock one of them then takes: while
// the break lock is held, only the breaker removes path, and nobody can
// create path while it exists.
func clearDeadLock(path, tmpDir string) (bool, error) {
	if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) {
		return true, nil // gone meanwhile: just retry
	}
	if !lockIsDead(path) {
		return false, nil
	}
	breakPath := strings.TrimSuffix(path, ".lock") + ".break.lock"
	err := createStamped(breakPath, tmpDir)
	if errors.Is(err, fs.ErrExist) {
		if lockIsDead(breakPath) {
			os.Remove(breakPath) // a breaker died mid-break; at worst another breaker retries
		}
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("break stale lock %s: %w", path, err)
	}
	defer os.Remove(breakPath)
	if lockIsDead(path) {
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return false, fmt.Errorf("break stale lock %s: %w", path, err)
		}
	}
	return true, nil
}
