// Package pty opens pseudo-terminals with the standard library only, for
// what must run m1nd at a terminal without a human: the tests of its
// terminal gestures and the bench's landings.
package pty

import (
	"os"
	"strconv"
	"syscall"
	"unsafe"
)

// Open opens a pseudo-terminal: its master, and its terminal end for a
// child's stdin and stdout.
func Open() (master, tty *os.File, err error) {
	master, err = os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, nil, err
	}
	ioctl := func(req uintptr, arg unsafe.Pointer) error {
		if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, master.Fd(), req, uintptr(arg)); e != 0 {
			return e
		}
		return nil
	}
	var unlock int32
	var n uint32
	if err = ioctl(syscall.TIOCSPTLCK, unsafe.Pointer(&unlock)); err == nil {
		err = ioctl(syscall.TIOCGPTN, unsafe.Pointer(&n))
	}
	if err == nil {
		tty, err = os.OpenFile("/dev/pts/"+strconv.FormatUint(uint64(n), 10), os.O_RDWR|syscall.O_NOCTTY|syscall.O_CLOEXEC, 0)
	}
	if err != nil {
		master.Close()
		return nil, nil, err
	}
	return master, tty, nil
}
