//go:build unix

package stages

import (
	"os"

	"golang.org/x/sys/unix"
)

// writableAt reports whether f can be written at offsets: not opened for appending (where Linux
// writes at the end whatever the offset).
func writableAt(f *os.File) bool {
	flags, ok := fileFlags(f)
	return ok && flags&unix.O_APPEND == 0
}

// fileFlags returns the flags f's file was opened with (F_GETFL).
func fileFlags(f *os.File) (flags int, ok bool) {
	rc, err := f.SyscallConn()
	if err != nil {
		return 0, false
	}
	flags = -1
	if err := rc.Control(func(fd uintptr) { flags, _ = unix.FcntlInt(fd, unix.F_GETFL, 0) }); err != nil {
		return 0, false
	}
	return flags, flags >= 0
}
