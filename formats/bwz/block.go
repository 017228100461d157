package bwz

import (
	"encoding/binary"
	"fmt"
	"slices"
	"sync"
)

// Segment coding methods.
const (
	methodStored  = 0 // the transform's bytes as they are
	methodRuns    = 1 // runs.go
	methodDirect  = 2 // direct.go
	methodHuffman = 3 // huffman.go
	// methodRunsFreq, runsfreq.go, is new in format version 3, which writes it instead of
	// methodRuns; version 3 reads version 2's payloads too.
	methodRunsFreq = 4
)

const (
	payloadVersion    = 4
	minPayloadVersion = 2 // the oldest version DecodeBlock reads
	// DefaultSegmentSize is how much of a block's transform one model codes; segments are coded
	// and decoded in parallel, and each starts its models afresh. 2 MiB rather than 8 costs 0.08%
	// on the Linux tar's 100 MiB block (0.05% on E. coli) and lets 16 threads share its coding
	// evenly: 36 segments, not 9 (the block's LZP text is 72 MiB).
	DefaultSegmentSize = 2 << 20
	minSegmentSize     = 64 << 10
	// SampleShift is log2 of the distance between sampled text positions: the inverse transform
	// walks from each sample in parallel (see kernels/cpu.InverseBWTSampled).
	SampleShift = 16
	// trialSize is how much of a segment both methods code to choose between them, in
	// trialParts slices spread over it.
	trialSize  = 256 << 10
	trialParts = 4
)

// BlockOptions configure EncodeBlock and DecodeBlock.
type BlockOptions struct {
	SegmentSize int  // bytes of transform per segment; DefaultSegmentSize when 0
	Threads     int  // segments coded at once; 1 when 0
	Fast        bool // code with Huffman tables (methodHuffman), not adaptive models
}

// NumSamples is the number of sampled rows a block of n bytes carries: one per 1<<SampleShift
// bytes after the first (whose row is the primary index).
func NumSamples(n int, shift uint) int {
	if n == 0 {
		return 0
	}
	return (n - 1) >> shift
}

// Payload transforms of a block's bytes into the text whose transform is coded (version 4).
const (
	textPlain = 0 // the block's bytes
	textLZP   = 1 // their LZP text (lzp.go)
)

// EncodeBlock appends to dst the payload of a block: the transform bwt of its text and samples,
// the rows of text positions k<<SampleShift for k = 1, 2, ... (NumSamples of them). The text is
// the block's bytes, or their LZP text made by lzp when it is not nil.
func EncodeBlock(dst, bwt []byte, samples []uint32, lzp *LZP, opts BlockOptions) ([]byte, error) {
	if len(samples) != NumSamples(len(bwt), SampleShift) {
		return dst, fmt.Errorf("bwz: %d samples for a block of %d bytes, want %d", len(samples), len(bwt), NumSamples(len(bwt), SampleShift))
	}
	seg := opts.SegmentSize
	if seg <= 0 {
		seg = DefaultSegmentSize
	}
	seg = max(seg, minSegmentSize)
	dst = append(dst, payloadVersion, SampleShift)
	if lzp == nil {
		dst = append(dst, textPlain)
	} else {
		dst = lzp.appendFields(append(dst, textLZP), len(bwt))
	}
	dst = binary.AppendUvarint(dst, uint64(seg))
	for _, s := range samples {
		dst = binary.LittleEndian.AppendUint32(dst, s)
	}
	nseg := (len(bwt) + seg - 1) / seg
	methods := make([]byte, nseg)
	coded := make([][]byte, nseg)
	parallel(nseg, opts.Threads, func(i int) {
		methods[i], coded[i] = encodeSegment(bwt[i*seg:min((i+1)*seg, len(bwt))], opts.Fast)
	})
	for i := range coded {
		dst = append(dst, methods[i])
		dst = binary.AppendUvarint(dst, uint64(len(coded[i])))
	}
	for _, c := range coded {
		dst = append(dst, c...)
	}
	return dst, nil
}

// encodeSegment codes src with the method that suits it: Huffman tables if fast, else the
// adaptive method that codes its start smaller; or none at all if coding does not pay.
func encodeSegment(src []byte, fast bool) (method byte, out []byte) {
	if fast {
		out = encodeHuffman(src, make([]byte, 0, len(src)/3))
		if len(out) >= len(src) {
			return methodStored, src
		}
		return methodHuffman, out
	}
	method = methodRunsFreq
	if chooseDirect(src) {
		method = methodDirect
	}
	if method == methodDirect {
		out = encodeDirectMethod(src, make([]byte, 0, len(src)/3))
	} else {
		out = encodeRunsFreq(src, make([]byte, 0, len(src)/4))
	}
	if len(out) >= len(src) {
		return methodStored, src
	}
	return method, out
}

// chooseDirect tells whether the direct method suits src better than the runs: it must code
// slices spread over src smaller. (Version 2 asked for 2% smaller, the direct coder being the
// slower of its two; method 4 codes DNA within 1% of it, and slower.) Slices of
// which more than 1/16 of the bytes are not among their 15 most frequent bytes are left to the
// runs without trying: the direct coder spells each such byte out in 8 more decisions, and never
// won on such data (transforms of text and binaries), where the trial cost a tenth of the coding.
func chooseDirect(src []byte) bool {
	part := trialSize / trialParts
	var count [256]int
	total := 0
	for k := 0; k < trialParts; k++ {
		lo := len(src) * k / trialParts
		for _, c := range src[lo:min(lo+part, len(src))] {
			count[c]++
		}
		total += min(lo+part, len(src)) - lo
	}
	slices.Sort(count[:])
	rare := total
	for _, n := range count[256-directEscape:] {
		rare -= n
	}
	if rare > total/16 {
		return false
	}
	var d, r int
	for k := 0; k < trialParts; k++ {
		lo := len(src) * k / trialParts
		t := src[lo:min(lo+part, len(src))]
		d += len(encodeDirectMethod(t, nil))
		r += len(encodeRunsFreq(t, nil))
	}
	return d < r
}

// Block is a decoded payload: the transform of the block's text, the sampled rows, and how the
// text was made from the block's bytes.
type Block struct {
	BWT     []byte
	Samples []uint32
	LZP     *LZP // nil: the text is the block's bytes
}

// DecodeBlock decodes the payload of a block of n bytes (the block header says n). It never reads
// outside payload, allocates no more than the payload's sampled rows bound (the transform of a
// text of m bytes has (m-1)>>SampleShift of them), and returns an error wrapping ErrCorrupt for
// anything an encoder would not have written.
func DecodeBlock(payload []byte, n int, opts BlockOptions) (Block, error) {
	var b Block
	p := payload
	if len(p) < 2 {
		return b, corruptf("payload of %d bytes is too short", len(p))
	}
	version := p[0]
	if version < minPayloadVersion || version > payloadVersion {
		return b, corruptf("payload version %d (this program reads %d to %d)", version, minPayloadVersion, payloadVersion)
	}
	if p[1] != SampleShift {
		return b, corruptf("sample distance 2^%d (this program reads 2^%d)", p[1], SampleShift)
	}
	p = p[2:]
	m := n // the length of the text
	if version >= 4 {
		if len(p) < 1 {
			return b, corruptf("payload ends in its text's kind")
		}
		switch p[0] {
		case textPlain:
			p = p[1:]
		case textLZP:
			var err error
			if b.LZP, m, p, err = readLZPFields(p[1:], n); err != nil {
				return b, err
			}
		default:
			return b, corruptf("unknown text kind %d", p[0])
		}
	}
	seg64, k := binary.Uvarint(p)
	if k <= 0 || seg64 < minSegmentSize || seg64 > 1<<31 {
		return b, corruptf("bad segment size")
	}
	p = p[k:]
	seg := int(seg64)
	ns := NumSamples(m, SampleShift)
	if len(p) < 4*ns {
		return b, corruptf("payload ends in the sampled rows")
	}
	samples := make([]uint32, ns)
	for i := range samples {
		s := binary.LittleEndian.Uint32(p[4*i:])
		if s < 1 || int64(s) > int64(m) {
			return b, corruptf("sampled row %d out of range 1..%d", s, m)
		}
		samples[i] = s
	}
	p = p[4*ns:]
	nseg := (m + seg - 1) / seg
	type segment struct {
		method byte
		data   []byte
	}
	segs := make([]segment, nseg)
	lens := make([]uint64, nseg)
	for i := range segs {
		if len(p) < 1 {
			return b, corruptf("payload ends in the segment table")
		}
		segs[i].method = p[0]
		if segs[i].method > methodRunsFreq || segs[i].method == methodRunsFreq && version < 3 {
			return b, corruptf("segment %d: unknown method %d", i, p[0])
		}
		l, k := binary.Uvarint(p[1:])
		if k <= 0 || l > uint64(len(payload)) {
			return b, corruptf("segment %d: bad length", i)
		}
		lens[i] = l
		p = p[1+k:]
	}
	for i := range segs {
		l := int(lens[i])
		if len(p) < l {
			return b, corruptf("segment %d: payload ends early", i)
		}
		segs[i].data = p[:l:l]
		p = p[l:]
	}
	if len(p) != 0 {
		return b, corruptf("%d bytes after the last segment", len(p))
	}
	bwt := make([]byte, m)
	errs := make([]error, nseg)
	parallel(nseg, opts.Threads, func(i int) {
		dst := bwt[i*seg : min((i+1)*seg, m)]
		if err := decodeSegment(segs[i].method, segs[i].data, dst); err != nil {
			errs[i] = fmt.Errorf("segment %d: %w", i, err)
		}
	})
	for _, err := range errs {
		if err != nil {
			return b, err
		}
	}
	b.BWT, b.Samples = bwt, samples
	return b, nil
}

// decodeSegment fills dst from data, a segment coded with method.
func decodeSegment(method byte, data, dst []byte) error {
	switch method {
	case methodStored:
		if len(data) != len(dst) {
			return corruptf("stored segment of %d bytes, want %d", len(data), len(dst))
		}
		copy(dst, data)
	case methodRuns:
		return decodeRuns(data, dst)
	case methodRunsFreq:
		return decodeRunsFreq(data, dst)
	case methodDirect:
		return decodeDirectMethod(data, dst)
	case methodHuffman:
		return decodeHuffman(data, dst)
	default:
		return corruptf("unknown method %d", method)
	}
	return nil
}

// parallel calls fn(0..n-1) on up to threads goroutines.
func parallel(n, threads int, fn func(i int)) {
	threads = min(max(threads, 1), n)
	if threads <= 1 {
		for i := 0; i < n; i++ {
			fn(i)
		}
		return
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	next := 0
	for t := 0; t < threads; t++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				i := next
				next++
				mu.Unlock()
				if i >= n {
					return
				}
				fn(i)
			}
		}()
	}
	wg.Wait()
}
