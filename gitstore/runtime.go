package gitstore

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
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
