package bwz

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Real transforms, for measuring the coders: BWZ_TRANSFORMS names files written by `sapipe bwt`
// (one block each, e.g. `sapipe bwt -b 1G -o tar.bwt linux-6.1-100M.tar`), separated by commas.
// Without it the tests and benchmarks below are skipped.

// readTransform returns the transform of the first block of the framed BWT stream in path.
func readTransform(t testing.TB, path string) []byte {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// stream header 16 bytes; block header: n, primary, data CRC, header CRC; then n bytes
	if len(b) < 32 || string(b[:6]) != "SAPBWT" {
		t.Fatalf("%s: too short for a BWT stream", path)
	}
	n := int(binary.LittleEndian.Uint32(b[16:]))
	if len(b) < 32+n {
		t.Fatalf("%s: block of %d bytes, file of %d", path, n, len(b))
	}
	return b[32 : 32+n]
}

func transformFiles(t testing.TB) []string {
	v := os.Getenv("BWZ_TRANSFORMS")
	if v == "" {
		t.Skip("BWZ_TRANSFORMS not set")
	}
	return strings.Split(v, ",")
}

// TestTransformSizes codes real transforms in segments of DefaultSegmentSize (or BWZ_SEGMENT)
// bytes with the default coders, on two threads, checks that they decode, and logs the sizes.
func TestTransformSizes(t *testing.T) {
	for _, path := range transformFiles(t) {
		bwt := readTransform(t, path)
		seg := DefaultSegmentSize
		if v := os.Getenv("BWZ_SEGMENT"); v != "" {
			seg, _ = strconv.Atoi(v)
		}
		total := 0
		start := time.Now()
		nseg := (len(bwt) + seg - 1) / seg
		methods := make([]byte, nseg)
		coded := make([][]byte, nseg)
		parallel(nseg, 2, func(i int) {
			methods[i], coded[i] = encodeSegment(bwt[i*seg:min((i+1)*seg, len(bwt))], false)
		})
		enc := time.Since(start)
		for i := range coded {
			total += len(coded[i])
		}
		start = time.Now()
		out := make([]byte, len(bwt))
		errs := make([]error, nseg)
		parallel(nseg, 2, func(i int) {
			dst := out[i*seg : min((i+1)*seg, len(bwt))]
			errs[i] = decodeSegment(methods[i], coded[i], dst)
		})
		dec := time.Since(start)
		for i, err := range errs {
			if err != nil {
				t.Fatalf("%s: segment %d: %v", path, i, err)
			}
		}
		if !bytes.Equal(out, bwt) {
			t.Fatalf("%s: round trip differs", path)
		}
		t.Logf("%s: %d bytes in %d segments (methods %v), encode %v, decode %v", filepath.Base(path), total, nseg, methods, enc, dec)
	}
}

// TestCodeOnce codes BWZ_SEGLEN bytes (default 2 MiB) of the first of BWZ_TRANSFORMS from
// BWZ_PART*8 MiB with BWZ_METHOD, once if BWZ_ONCE is "enc", then decodes it if it is "dec": for
// counting instructions (valgrind --tool=cachegrind), the runs' difference is the coding's.
func TestCodeOnce(t *testing.T) {
	mode := os.Getenv("BWZ_ONCE")
	if mode == "" {
		t.Skip("BWZ_ONCE not set")
	}
	src := transformPart(t, 2<<20)
	method := int(methodRunsFreq)
	envInt("BWZ_METHOD", &method)
	enc := methodEncoders[method]
	if mode == "none" {
		return
	}
	coded := enc(src, make([]byte, 0, len(src)))
	if mode == "dec" {
		out := make([]byte, len(src))
		if err := decodeSegment(byte(method), coded, out); err != nil || !bytes.Equal(out, src) {
			t.Fatal("round trip", err)
		}
	}
}

// TestSpeed compares methods 1 and 4 (and BWZ_METHODS, e.g. "1,4,2") on BWZ_SEGLEN bytes (default
// 1 MiB) of the first of BWZ_TRANSFORMS from BWZ_PART*8 MiB, one core, alternating them
// BWZ_SPEED times and keeping each one's fastest run (wall time: on a shared machine the fastest
// run is the one least disturbed).
func TestSpeed(t *testing.T) {
	rounds := 0
	envInt("BWZ_SPEED", &rounds)
	if rounds == 0 {
		t.Skip("BWZ_SPEED not set")
	}
	src := transformPart(t, 1<<20)
	methods := []int{methodRuns, methodRunsFreq}
	if s := os.Getenv("BWZ_METHODS"); s != "" {
		methods = nil
		for _, f := range strings.Split(s, ",") {
			m, _ := strconv.Atoi(f)
			methods = append(methods, m)
		}
	}
	coded := make([][]byte, len(methods))
	bestE := make([]time.Duration, len(methods))
	bestD := make([]time.Duration, len(methods))
	out := make([]byte, len(src))
	for r := 0; r < rounds; r++ {
		for i, m := range methods {
			start := time.Now()
			coded[i] = methodEncoders[m](src, coded[i][:0])
			if d := time.Since(start); r == 0 || d < bestE[i] {
				bestE[i] = d
			}
			start = time.Now()
			if err := decodeSegment(byte(m), coded[i], out); err != nil || !bytes.Equal(out, src) {
				t.Fatalf("method %d: round trip: %v", m, err)
			}
			if d := time.Since(start); r == 0 || d < bestD[i] {
				bestD[i] = d
			}
		}
	}
	mb := func(d time.Duration) float64 { return float64(len(src)) / d.Seconds() / 1e6 }
	for i, m := range methods {
		t.Logf("method %d: %d bytes, encode %.2f MB/s (%.3f of the first), decode %.2f MB/s (%.3f)", m, len(coded[i]),
			mb(bestE[i]), bestE[0].Seconds()/bestE[i].Seconds(), mb(bestD[i]), bestD[0].Seconds()/bestD[i].Seconds())
	}
}

// methodEncoders are the segment coders by method, for the measuring tests.
var methodEncoders = map[int]func(src, out []byte) []byte{methodRuns: encodeRuns, methodRunsFreq: encodeRunsFreq, methodDirect: encodeDirectMethod}

// transformPart returns BWZ_SEGLEN bytes (default n) of the first of BWZ_TRANSFORMS, from
// BWZ_PART*8 MiB on (default 5), or its last BWZ_SEGLEN bytes.
func transformPart(t *testing.T, n int) []byte {
	bwt := readTransform(t, transformFiles(t)[0])
	part := 5
	envInt("BWZ_PART", &part)
	envInt("BWZ_SEGLEN", &n)
	lo := min(part*DefaultSegmentSize, max(len(bwt)-n, 0))
	return bwt[lo:min(lo+n, len(bwt))]
}

// envInt sets *v from the environment variable name, if it is set.
func envInt(name string, v *int) {
	if s := os.Getenv(name); s != "" {
		*v, _ = strconv.Atoi(s)
	}
}
