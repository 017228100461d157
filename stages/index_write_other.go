//go:build !linux

package stages

import (
	"os"

	"github.com/sapipe/sapipe/formats"
)

// writeMapped is Linux's only: elsewhere the index is written with pwrite (done is false).
func writeMapped(f *os.File, ix *formats.Index, threads int) (n int64, done bool, err error) {
	return 0, false, nil
}
