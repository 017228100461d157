//go:build unix

package stages

import (
	"os"

	"golang.org/x/sys/unix"
)

// writableAt reports whether f can be written at offsets: not opened for appending (where Linux
// writes at the end whatever the offset).
func writableAt(f *os.File) bool {
	rc, err := f.SyscallConn()
	if err != nil {
		return false
	}
	flags := -1
	if err := rc.Control(func(fd uintptr) { flags, _ = unix.FcntlInt(fd, unix.F_GETFL, 0) }); err != nil {
		return false
	}
	return flags >= 0 && flags&unix.O_APPEND == 0
}
