package cuda

import "golang.org/x/sys/unix"

// adviseHuge asks for transparent huge pages where the system gives them: a 2 MiB page is one
// fault and one page to lock where 4 KiB pages are 512.
func adviseHuge(mem []byte) { _ = unix.Madvise(mem, unix.MADV_HUGEPAGE) }
