//go:build linux

package gitstore

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// watchMask is what moves a ref in a watched folder: a loose ref written
// (git and m1nd rename or link a lock into place), removed, or a folder
// made or gone.
const watchMask = unix.IN_CREATE | unix.IN_DELETE | unix.IN_MOVED_FROM | unix.IN_MOVED_TO |
	unix.IN_CLOSE_WRITE | unix.IN_DELETE_SELF | unix.IN_ONLYDIR

// WatchRefs wakes the returned channel whenever a ref under prefix may
// have moved: a loose ref's folder under prefix changed, or packed-refs was
// replaced. A wake-up is a hint, never a list: the watcher stamps and lists
// as it would on a poll, and several changes may share one wake-up. ok is
// false where the system cannot watch (no inotify, its limit reached):
// the caller polls. The watch ends with ctx, and the channel is closed.
func (r *Repo) WatchRefs(ctx context.Context, prefix string) (wake <-chan struct{}, ok bool) {
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		return nil, false
	}
	// Non-blocking, so the runtime's poller waits for it and Close ends a
	// Read in flight.
	f := os.NewFile(uintptr(fd), "inotify")
	w := &refWatch{f: f, root: r.prefixDir(prefix),
		common: r.commonDir, dirs: map[int]string{}, wake: make(chan struct{}, 1)}
	// The common dir for packed-refs, refs/ for prefix's folder coming into
	// being, and every folder under prefix.
	if w.add(r.commonDir, unix.IN_MOVED_TO|unix.IN_CREATE|unix.IN_CLOSE_WRITE|unix.IN_DELETE|unix.IN_ONLYDIR) != nil ||
		w.add(filepath.Join(r.commonDir, "refs"), watchMask) != nil || w.addTree(w.root) != nil {
		f.Close()
		return nil, false
	}
	go func() {
		<-ctx.Done()
		f.Close()
	}()
	go w.read()
	return w.wake, true
}

// refWatch is one WatchRefs.
type refWatch struct {
	f      *os.File
	root   string // prefix's folder
	common string // the common dir: packed-refs
	mu     sync.Mutex
	dirs   map[int]string // watch descriptor → folder
	wake   chan struct{}
}

// add watches dir with mask; a folder that is not there is no error.
func (w *refWatch) add(dir string, mask uint32) error {
	// Through the file, not its number: once ctx closed it, a number the
	// kernel gave to another file must not be watched through.
	conn, err := w.f.SyscallConn()
	if err != nil {
		return err
	}
	var wd int
	if cerr := conn.Control(func(fd uintptr) { wd, err = unix.InotifyAddWatch(int(fd), dir, mask) }); cerr != nil {
		return cerr
	}
	if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR) {
		return nil
	}
	if err != nil {
		return err
	}
	w.mu.Lock()
	w.dirs[wd] = dir
	w.mu.Unlock()
	return nil
}

// addTree watches dir and every folder under it.
func (w *refWatch) addTree(dir string) error {
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		if d.IsDir() {
			return w.add(path, watchMask)
		}
		return nil
	})
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}

// read turns events into wake-ups until the file is closed, watching each
// new folder under prefix as it appears (its first ref is in it by then,
// so the folder's creation wakes too).
func (w *refWatch) read() {
	defer close(w.wake)
	buf := make([]byte, 64<<10)
	for {
		n, err := w.f.Read(buf)
		if err != nil {
			return
		}
		moved := false
		for off := 0; off+unix.SizeofInotifyEvent <= n; {
			ev := (*unix.InotifyEvent)(unsafe.Pointer(&buf[off]))
			name := ""
			if ev.Len > 0 {
				name = strings.TrimRight(string(buf[off+unix.SizeofInotifyEvent:off+unix.SizeofInotifyEvent+int(ev.Len)]), "\x00")
			}
			off += unix.SizeofInotifyEvent + int(ev.Len)
			moved = w.event(ev, name) || moved
		}
		if moved {
			select {
			case w.wake <- struct{}{}:
			default: // a wake-up is already waiting: it covers this one
			}
		}
	}
}

// event reports whether one event may have moved a ref under prefix.
func (w *refWatch) event(ev *unix.InotifyEvent, name string) bool {
	if ev.Mask&unix.IN_Q_OVERFLOW != 0 {
		return true // events were lost: look
	}
	w.mu.Lock()
	dir, known := w.dirs[int(ev.Wd)]
	if ev.Mask&unix.IN_IGNORED != 0 {
		delete(w.dirs, int(ev.Wd))
	}
	w.mu.Unlock()
	if !known {
		return false
	}
	path := filepath.Join(dir, name)
	switch {
	case dir == w.common:
		return name == "packed-refs"
	case path == w.root || strings.HasPrefix(path, w.root+string(filepath.Separator)):
		if ev.Mask&unix.IN_ISDIR != 0 && ev.Mask&(unix.IN_CREATE|unix.IN_MOVED_TO) != 0 {
			w.addTree(path) // a watch refused (the limit) leaves the safety-net listing to see it
		}
		return true
	case strings.HasPrefix(w.root, path+string(filepath.Separator)):
		// A folder on the way to prefix's (refs/m1nd itself) came or went.
		if ev.Mask&unix.IN_ISDIR != 0 && ev.Mask&(unix.IN_CREATE|unix.IN_MOVED_TO) != 0 {
			w.add(path, watchMask)
			w.addTree(w.root)
		}
		return true
	}
	return false
}
