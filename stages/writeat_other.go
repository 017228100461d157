//go:build !unix

package stages

import "os"

// writableAt reports false: elsewhere output is written in order.
func writableAt(*os.File) bool { return false }
