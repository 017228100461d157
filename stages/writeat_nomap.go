//go:build !linux

package stages

import "os"

// outputMap is Linux's only: elsewhere output files are written by pwrite.
type outputMap struct{ from, window int64 }

func newOutputMap(*os.File, int64, int64) *outputMap { return nil }
func (*outputMap) acquire(int64) (bool, error)       { return false, nil }
func (*outputMap) copyAt(int64, []byte, int64) error { return nil }
func (*outputMap) passed(int64)                      {}
func (*outputMap) close(int64) error                 { return nil }

// localFS reports false: outputs are written by pwrite.
func localFS(*os.File) bool { return false }
