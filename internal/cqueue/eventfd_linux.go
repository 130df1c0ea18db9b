package cqueue

import (
	"encoding/binary"
	"syscall"
)

// eventFD is a non-blocking, close-on-exec eventfd: readable while its
// counter is non-zero.
type eventFD int

func newEventFD() (eventFD, error) {
	fd, _, errno := syscall.RawSyscall(syscall.SYS_EVENTFD2, 0, syscall.O_CLOEXEC|syscall.O_NONBLOCK, 0)
	if errno != 0 {
		return -1, errno
	}
	return eventFD(fd), nil
}

// signal makes the descriptor readable. The counter cannot overflow: the
// queue signals only on its empty-to-non-empty transition and clears the
// counter when it empties.
func (e eventFD) signal() {
	var one [8]byte
	binary.NativeEndian.PutUint64(one[:], 1)
	for {
		_, err := syscall.Write(int(e), one[:])
		if err != syscall.EINTR {
			return
		}
	}
}

// clear reads the counter back to zero (EAGAIN when it already was).
func (e eventFD) clear() {
	var buf [8]byte
	for {
		_, err := syscall.Read(int(e), buf[:])
		if err != syscall.EINTR {
			return
		}
	}
}

func (e eventFD) close() { _ = syscall.Close(int(e)) }
