package cpu

import (
	"math/rand"
	"slices"
	"testing"
	"unsafe"
)

// TestSerialKernels compares the serial scan kernels with their Go definitions on random entries,
// with some buckets inducing into the run itself (entries written before the scan reads them).
func TestSerialKernels(t *testing.T) {
	rng := rand.New(rand.NewSource(9))
	const buckets = 40
	tb := make([]byte, 3000)
	tw := make([]int32, len(tb))
	for i := range tb {
		if i > 0 && rng.Intn(3) == 0 {
			tb[i], tw[i] = tb[i-1], tw[i-1]
			continue
		}
		tb[i] = byte(rng.Intn(buckets))
		tw[i] = int32(rng.Intn(buckets))
	}
	for _, kind := range []int{scanL, scanR, scanFL, scanFR, scanLWide, scanRWide} {
		for _, n := range []int{0, 1, 2, 63, 64, 65, 127, 128, 129, 191, 192, 193, 200, 1000} {
			entries := kernelEntries(rng, n, len(tb), kind)
			room := 2*n + 2
			ptr := make([]int32, 4*buckets)
			for c := range buckets {
				for b := range 2 {
					at := int32(n + (2*c+b)*room + room/2)
					if c == 3 && n > 0 {
						at = int32(n / 2) // into the run, ahead of the scan or behind it
					}
					if kind != scanFL && kind != scanFR {
						ptr[4*c+b] = at
						ptr[4*c+2+b] = int32(rng.Intn(3))
					} else if b == 0 {
						ptr[c] = at
					}
				}
			}
			run := func(text any, goVersion, branchless bool) ([]int32, []int32, int32) {
				sa := make([]int32, n+2*buckets*room)
				copy(sa, entries)
				p := slices.Clone(ptr)
				a := &serialArgs{sa: unsafe.Pointer(&sa[0]), ptr: unsafe.Pointer(&p[0]), n: n, d: 7}
				down := kind == scanR || kind == scanFR || kind == scanRWide
				a.first = unsafe.Pointer(&sa[0])
				if down && n > 0 {
					a.first = unsafe.Pointer(&sa[n-1])
				}
				switch tx := text.(type) {
				case []byte:
					a.t = unsafe.Pointer(&tx[0])
					runSerial[byte](a, kind, goVersion, branchless)
				case []int32:
					a.t = unsafe.Pointer(&tx[0])
					runSerial[int32](a, kind, goVersion, branchless)
				}
				return sa, p, a.d
			}
			for _, text := range []any{tb, tw} {
				for _, branchless := range []bool{false, true} {
					sa1, p1, d1 := run(text, false, branchless)
					sa2, p2, d2 := run(text, true, branchless)
					if !slices.Equal(sa1, sa2) || !slices.Equal(p1, p2) || d1 != d2 {
						t.Fatalf("kind %d, %d entries, %T, branchless %v: kernel differs from its definition (group %d, want %d)", kind, n, text, branchless, d1, d2)
					}
				}
			}
			if kind == scanLWide || kind == scanRWide {
				continue
			}
			// The kernels for large alphabets.
			big := func(goVersion bool) ([]int32, []int32, int32) {
				sa := make([]int32, n+2*buckets*room)
				copy(sa, entries)
				p := slices.Clone(ptr)
				a := &serialArgs{t: unsafe.Pointer(&tw[0]), sa: unsafe.Pointer(&sa[0]), ptr: unsafe.Pointer(&p[0]), n: n, d: 7}
				a.first = unsafe.Pointer(&sa[0])
				if (kind == scanR || kind == scanFR) && n > 0 {
					a.first = unsafe.Pointer(&sa[n-1])
				}
				if goVersion {
					runSerial[int32](a, kind, true, false)
				} else {
					serialBig(a, kind)
				}
				return sa, p, a.d
			}
			sa1, p1, d1 := big(false)
			sa2, p2, d2 := big(true)
			if !slices.Equal(sa1, sa2) || !slices.Equal(p1, p2) || d1 != d2 {
				t.Fatalf("kind %d, %d entries, large alphabet: kernel differs from its definition", kind, n)
			}
		}
	}
}

func runSerial[T symbol](a *serialArgs, kind int, goVersion, branchless bool) {
	switch {
	case kind == scanLWide && goVersion:
		serialLWGo[T](a)
	case kind == scanLWide:
		serialLW[T](a)
	case kind == scanRWide && goVersion:
		serialRWGo[T](a)
	case kind == scanRWide:
		serialRW[T](a)
	case kind == scanL && goVersion:
		serialLGo[T](a)
	case kind == scanL:
		serialL[T](a)
	case kind == scanR && goVersion:
		serialRGo[T](a)
	case kind == scanR:
		serialR[T](a)
	case kind == scanFL && goVersion:
		serialFLGo[T](a)
	case kind == scanFL:
		serialFL[T](a, branchless)
	case goVersion:
		serialFRGo[T](a)
	default:
		serialFR[T](a, branchless)
	}
}
