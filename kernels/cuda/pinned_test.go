package cuda

import (
	"bytes"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// TestPinHost: memory pinned by pinHost (mapped, faulted in on several goroutines, registered)
// goes up to the card and back by asynchronous copies with its bytes, at sizes below and above
// the page and the parts touchPages splits. Skipped without a GPU.
func TestPinHost(t *testing.T) {
	d, s := gpuStream(t)
	for _, n := range []int{1, 4095, 4097, 1 << 20, 37<<20 + 3} {
		up, err := pinHost(d, n)
		if err != nil {
			t.Fatal(err)
		}
		down, err := pinHost(d, n)
		if err != nil {
			t.Fatal(err)
		}
		src, dst := unsafe.Slice((*byte)(up), n), unsafe.Slice((*byte)(down), n)
		for i := range src {
			src[i] = byte(i*7 + i>>12)
		}
		var dev devBuf
		if err := dev.ensure(d, uint64(n)); err != nil {
			t.Fatal(err)
		}
		if err := s.toDevice(dev.p, up, n); err != nil {
			t.Fatal(err)
		}
		if err := s.toHost(down, dev.p, n); err != nil {
			t.Fatal(err)
		}
		if err := s.sync(); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(src, dst) {
			t.Fatalf("%d bytes: the copy back differs", n)
		}
		dev.free(d)
		unpinHost(d, up, n)
		unpinHost(d, down, n)
	}
}

// TestTouchPages: every page is written, whatever the split.
func TestTouchPages(t *testing.T) {
	for _, n := range []int{1, 4096, 4<<20 + 1, 33<<20 + 4096*3} {
		mem := bytes.Repeat([]byte{1}, n)
		touchPages(mem)
		page := unix.Getpagesize()
		for i := 0; i < n; i += page {
			if mem[i] != 0 {
				t.Fatalf("%d bytes: page at %d not touched", n, i)
			}
		}
		if n > 1 && mem[1] != 1 {
			t.Fatalf("%d bytes: more than a byte a page written", n)
		}
	}
}
