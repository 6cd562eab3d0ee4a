package gitstore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// LockFile takes the lock path+".lock" with the same protocol as a ref
// lock (exclusive create, a stamp naming this process, dead holders
// cleared, backoff up to timeout) for runtime files m1nd updates in place,
// such as delivery cursors. unlock removes it.
func LockFile(ctx context.Context, path string, timeout time.Duration) (unlock func(), err error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	lock := path + ".lock"
	if err := acquireLock(ctx, lock, filepath.Dir(path), timeout); err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return func() { os.Remove(lock) }, nil
}

// WriteFileAtomic replaces path with data: written to a temporary file in
// the same folder and renamed over it, so a reader sees the old file or
// the new one, never a torn one.
func WriteFileAtomic(path string, data []byte, perm os.FileMode) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, filepath.Base(path)+".tmp-")
	if err != nil {
		return err
	}
	_, err = tmp.Write(data)
	if err == nil {
		err = tmp.Chmod(perm)
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// OpenRuntimeWrite opens a file of m1nd's runtime folder for writing (a
// log, a journal), creating it with perm when missing; flag adds
// os.O_APPEND or os.O_TRUNC. Like OpenRuntime it never blocks and never
// follows a link: a FIFO where a log should be is refused (a blocking open
// would wait for a reader for ever), as is anything but a regular file.
func OpenRuntimeWrite(path string, flag int, perm os.FileMode) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|syscall.O_NONBLOCK|syscall.O_NOFOLLOW|flag, perm)
	switch {
	case errors.Is(err, syscall.ELOOP):
		return nil, &NotRegularError{Path: path, Kind: "symbolic link"}
	case errors.Is(err, syscall.ENXIO):
		// O_WRONLY|O_NONBLOCK on a FIFO nobody reads.
		return nil, &NotRegularError{Path: path, Kind: "named pipe (FIFO)"}
	case err != nil:
		return nil, err
	}
	return regularOnly(f, path)
}
