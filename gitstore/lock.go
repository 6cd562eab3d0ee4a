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
	lock, err := acquireLock(ctx, path+".lock", r.LockTimeout)
	if err != nil {
		return fmt.Errorf("update %s: %w", name, err)
	}
	defer func() {
		lock.Close()
		os.Remove(lock.Name())
	}()
	cur, ok, err := readLooseRef(path)
	if err != nil {
		return fmt.Errorf("update %s: %w", name, err)
	}
	if !ok {
		packed, err := r.readPackedRefs()
		if err != nil {
			return fmt.Errorf("update %s: %w", name, err)
		}
		cur = packed[name]
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

// refValueFile writes h as a ref file's contents into a temporary file in
// the runtime folder (the same file system as the refs, outside refs/ so
// git never reads a leftover as a ref), synced and with git's mode.
func (r *Repo) refValueFile(h Hash) (string, error) {
	dir := filepath.Join(r.RuntimeDir(), "tmp")
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

// acquireLock creates path exclusively and stamps it with this process,
// backing off with jitter while another writer holds it, up to timeout. A
// lock abandoned by a killed writer is cleared (see lockIsDead).
func acquireLock(ctx context.Context, path string, timeout time.Duration) (*os.File, error) {
	deadline := time.Now().Add(timeout)
	backoff := time.Millisecond
	for {
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
		if err == nil {
			if _, err := f.WriteString(ownStamp()); err != nil {
				f.Close()
				os.Remove(path)
				return nil, fmt.Errorf("stamp lock: %w", err)
			}
			return f, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("create lock: %w", err)
		}
		if cleared, err := clearDeadLock(path); err != nil {
			return nil, err
		} else if cleared {
			continue
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("%w (%s exists; if no git or m1nd process is running, remove it)", ErrRefLocked, path)
		}
		sleep := backoff/2 + rand.N(backoff)
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(sleep):
		}
		if backoff < 50*time.Millisecond {
			backoff *= 2
		}
	}
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

// emptyLockAge is how old an empty lock must be to count as abandoned:
// git and m1nd both write into a lock right after creating it, so only a
// writer killed in between leaves one empty for long.
const emptyLockAge = time.Second

// lockIsDead reports whether the lock at path was abandoned: an m1nd stamp
// of a process that is not running on this boot, or an empty lock older
// than emptyLockAge. A lock holding a ref value may belong to a live git
// transaction and is never judged dead.
func lockIsDead(path string) bool {
	f, err := OpenRegular(path)
	if err != nil {
		return false // a FIFO or a device is no lock m1nd made: never cleared, never read
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return false
	}
	var buf [256]byte
	n, _ := f.Read(buf[:])
	if n == 0 {
		return fi.Size() == 0 && time.Since(fi.ModTime()) > emptyLockAge
	}
	return stampIsDead(buf[:n])
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
func clearDeadLock(path string) (bool, error) {
	if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) {
		return true, nil // gone meanwhile: just retry
	}
	if !lockIsDead(path) {
		return false, nil
	}
	breakPath := strings.TrimSuffix(path, ".lock") + ".break.lock"
	b, err := os.OpenFile(breakPath, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
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
	_, werr := b.WriteString(ownStamp())
	b.Close()
	if werr != nil {
		return false, nil
	}
	if lockIsDead(path) {
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return false, fmt.Errorf("break stale lock %s: %w", path, err)
		}
	}
	return true, nil
}
