//go:build !linux

package cuda

// adviseHuge does nothing where there are no transparent huge pages to ask for.
func adviseHuge([]byte) {}
