package gitstore

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// ErrNotRegular is returned for a path that is not a regular file (a
// FIFO, a device, a socket): reading one could block for ever, so m1nd
// never does. git refuses such files at once too.
var ErrNotRegular = errors.New("not a regular file")

// OpenRegular opens path for reading only if it is a regular file. The
// open itself never blocks: it is non-blocking, so a FIFO nobody writes to
// is refused instead of hanging the process (and its signals). It follows
// a symbolic link (OpenRuntime does not).
func OpenRegular(path string) (*os.File, error) { return openRegular(path, false) }

// openRegular is OpenRegular and OpenRuntime: a non-blocking open, through
// a symbolic link only when follow, and a *NotRegularError for anything
// but a regular file.
func openRegular(path string, nofollow bool) (*os.File, error) {
	flags := os.O_RDONLY | syscall.O_NONBLOCK
	if nofollow {
		flags |= syscall.O_NOFOLLOW
	}
	f, err := os.OpenFile(path, flags, 0)
	if nofollow && errors.Is(err, syscall.ELOOP) {
		return nil, &NotRegularError{Path: path, Kind: "symbolic link"}
	}
	if err != nil {
		return nil, err
	}
	return regularOnly(f, path)
}

// regularOnly is f, opened from path, when it is a regular file; it is
// closed and refused with a *NotRegularError when it is anything else.
func regularOnly(f *os.File, path string) (*os.File, error) {
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, &NotRegularError{Path: path, Kind: KindOf(fi.Mode())}
	}
	return f, nil
}

// ReadRegular reads a regular file whole, at most limit bytes (limit < 0:
// no limit); more is an error.
func ReadRegular(path string, limit int64) ([]byte, error) {
	f, err := OpenRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readAtMost(f, path, limit)
}

// readAtMost reads f whole, at most limit bytes (limit < 0: no limit).
func readAtMost(f *os.File, path string, limit int64) ([]byte, error) {
	var r io.Reader = f
	if limit >= 0 {
		r = io.LimitReader(f, limit+1)
	}
	// Sized from the file, as os.ReadFile does: growing from 512 bytes
	// touched five times a large file's size (the 32 MB head cache of
	// 100k missions was 160 MB of fresh pages).
	size := int64(0)
	if fi, err := f.Stat(); err == nil {
		size = fi.Size()
	}
	if limit >= 0 {
		size = min(size, limit+1)
	}
	buf := bytes.NewBuffer(make([]byte, 0, size+bytes.MinRead))
	if _, err := buf.ReadFrom(r); err != nil {
		return nil, err
	}
	b := buf.Bytes()
	if limit >= 0 && int64(len(b)) > limit {
		return nil, fmt.Errorf("%s is larger than %d bytes", path, limit)
	}
	return b, nil
}

// NotRegularError is a path in m1nd's runtime folder that is not a
// regular file: a FIFO (reading it would block), a symbolic link (m1nd
// never follows one there: it could point anywhere, and an error would
// quote what it points to), a socket, a device or a folder.
type NotRegularError struct {
	Path string
	Kind string // "symbolic link", "named pipe (FIFO)", …
}

func (e *NotRegularError) Error() string {
	return fmt.Sprintf("%s is a %s, not a regular file: m1nd reads only regular files in its runtime folder and its ref folders, and follows no link there; remove it (m1nd init makes again what the runtime folder needs; a ref is restored with git update-ref)", e.Path, e.Kind)
}

// Unwrap makes errors.Is(err, ErrNotRegular) hold.
func (e *NotRegularError) Unwrap() error { return ErrNotRegular }

// Is makes a folder where a file was expected errors.Is(err,
// syscall.EISDIR), as the open of a folder would have said: a ref name that
// is a folder of refs is no ref.
func (e *NotRegularError) Is(target error) bool {
	return target == syscall.EISDIR && e.Kind == "folder"
}

// OpenRuntime opens a file of m1nd's runtime folder (or a ref file) for
// reading: only a regular file, never through a symbolic link, and without
// blocking on a FIFO. A missing file is fs.ErrNotExist as for os.Open.
func OpenRuntime(path string) (*os.File, error) { return openRegular(path, true) }

// ReadRuntime reads a file of m1nd's runtime folder whole, as OpenRuntime
// opens it, at most limit bytes (limit < 0: no limit); more is an error.
func ReadRuntime(path string, limit int64) ([]byte, error) {
	f, err := OpenRuntime(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readAtMost(f, path, limit)
}

// KindOf names what a file of mode m is, as m1nd's lessons say it: "named
// pipe (FIFO)", "socket", "device", "folder", "symbolic link", "regular
// file" or "special file".
func KindOf(m fs.FileMode) string {
	switch {
	case m.IsRegular():
		return "regular file"
	case m&fs.ModeNamedPipe != 0:
		return "named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&fs.ModeDevice != 0:
		return "device"
	case m.IsDir():
		return "folder"
	case m&fs.ModeSymlink != 0:
		return "symbolic link"
	}
	return "special file"
}
