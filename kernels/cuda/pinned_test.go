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

// TestAllocHostFallback: where the driver refuses to register mapped memory, a worker's pinned
// buffer comes from the driver's own allocation, works for copies, keeps its contents as it grows,
// and is freed the way it was made. Skipped without a GPU.
func TestAllocHostFallback(t *testing.T) {
	d, s := gpuStream(t)
	for _, refuse := range []bool{false, true} {
		refuseRegister = refuse
		var h hostBuf
		err := h.ensure(d, 2<<20)
		refuseRegister = false
		if err != nil {
			t.Fatalf("refused %v: %v", refuse, err)
		}
		if h.mapped == refuse {
			t.Fatalf("refused %v: mapped %v", refuse, h.mapped)
		}
		b := hostSlice[byte](&h, 2<<20)
		for i := range b {
			b[i] = byte(i * 5)
		}
		refuseRegister = refuse
		err = h.ensure(d, 5<<20) // grown: the contents kept
		refuseRegister = false
		if err != nil {
			t.Fatal(err)
		}
		var dev devBuf
		if err := dev.ensure(d, 2<<20); err != nil {
			t.Fatal(err)
		}
		got := make([]byte, 2<<20)
		if err := s.toDevice(dev.p, h.p, 2<<20); err != nil {
			t.Fatal(err)
		}
		if err := s.toHost(unsafe.Pointer(&got[0]), dev.p, 2<<20); err != nil {
			t.Fatal(err)
		}
		if err := s.sync(); err != nil {
			t.Fatal(err)
		}
		for i := range got {
			if got[i] != byte(i*5) {
				t.Fatalf("refused %v: byte %d came back %d", refuse, i, got[i])
			}
		}
		dev.free(d)
		h.free(d)
	}
}
