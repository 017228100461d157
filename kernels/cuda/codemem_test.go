package cuda

import (
	"errors"
	"testing"
	"unsafe"
)

// goPinned is codeMemory's allocation in Go memory, for tests without a GPU: it keeps what it
// handed out alive, and counts what is released.
type goPinned struct {
	live     map[unsafe.Pointer][]byte
	released int
	fail     bool
}

func testCodeMemory(most int) (*codeMemory, *goPinned) {
	g := &goPinned{live: map[unsafe.Pointer][]byte{}}
	c := &codeMemory{most: most, bufs: map[*byte]int{},
		alloc: func(n int) (unsafe.Pointer, error) {
			if g.fail {
				return nil, errors.New("no pinned memory")
			}
			b := make([]byte, n)
			p := unsafe.Pointer(&b[0])
			g.live[p] = b
			return p, nil
		},
		release: func(p unsafe.Pointer, n int) {
			if b, ok := g.live[p]; !ok || len(b) != n {
				panic("released twice, not ours, or with another size")
			}
			delete(g.live, p)
			g.released++
		}}
	return c, g
}

// TestCodeMemory: codes grown through codeMemory land in its buffers with their bytes, stay put
// while they have room, move (the old buffer freed once) when they need more, and are Go's past
// its bound or once an allocation failed; free releases the rest.
func TestCodeMemory(t *testing.T) {
	c, g := testCodeMemory(8 << 20)
	goCodes := append(make([]byte, 0, 64), "ACGT"...)
	codes := c.GrowCodes(goCodes, 100)
	if !c.owns(&codes[0]) || string(codes) != "ACGT" || cap(codes) < 104 {
		t.Fatalf("Go codes not moved in: owned %v, %q, cap %d", c.owns(&codes[0]), codes, cap(codes))
	}
	again := c.GrowCodes(codes[:0], 1000)
	if &again[:1][0] != &codes[0] || len(again) != 0 {
		t.Fatal("codes with room moved")
	}
	codes = append(codes, "GG"...)
	bigger := c.GrowCodes(codes, 2<<20)
	if !c.owns(&bigger[0]) || c.owns(&codes[0]) || string(bigger) != "ACGTGG" || g.released != 1 {
		t.Fatalf("grown: owned %v, old owned %v, %q, released %d", c.owns(&bigger[0]), c.owns(&codes[0]), bigger, g.released)
	}
	// Past the bound: Go memory, the bytes kept.
	past := c.GrowCodes(append([]byte(nil), "TT"...), 16<<20)
	if c.owns(&past[0]) || string(past) != "TT" || cap(past) < 16<<20+2 {
		t.Fatal("codes past the bound not in Go memory")
	}
	// A failed allocation: Go memory from then on.
	g.fail = true
	if x := c.GrowCodes(nil, 10); c.owns(&x[:1][0]) {
		t.Fatal("codes owned after a failed allocation")
	}
	g.fail = false
	if x := c.GrowCodes(nil, 10); c.owns(&x[:1][0]) {
		t.Fatal("codes owned after a failure")
	}
	c.free()
	if len(g.live) != 0 || c.owns(&bigger[0]) {
		t.Fatalf("%d buffers left after free", len(g.live))
	}
}
