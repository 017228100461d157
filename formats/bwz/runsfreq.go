package bwz

import (
	"math"
	"math/bits"
)

// The run coder with frequencies (method methodRunsFreq, new in format version 3): method 1's
// runs, move-to-front ranks and lengths (runs.go), with the ranks predicted also from how often
// each byte occurred in the recent runs. Move-to-front ranks keep only the order of the bytes'
// last occurrences; a byte seen in many of the last hundred runs is likelier to come next than one
// seen once, even at a larger rank. So the coder keeps a recency-weighted count of each byte
// (runFreq: each run's byte counts 1+2^-7 times as much as the previous run's), and for a decision
// between two sets of ranks it sums the counts of the bytes at those ranks, in the list as it
// stands before the run: the log of the ratio of the two sums is an estimate of the decision in
// the logistic domain (ratio). The coder:
//
//   - codes a rank's bucket down method 1's tree. Nodes 0 to 3, whose sides are ranks under 16 or
//     all the ranks from some point on, mix that estimate with a counter in the context of the
//     previous two bytes; nodes 4 to 6 (ranks of 16 and more, a few % of them in text) mix the
//     counters in the contexts of the previous ranks and length and of the previous two bytes.
//     The mixers' weights are chosen by the previous rank, as in method 1; method 1's counters in
//     the context of the previous byte are gone (with the estimate they saved under 0.05%);
//   - codes the bits under the top bit of ranks under 32 each with a counter chosen by the
//     bucket, the bit and the estimate for the two halves of the ranks left (freqLevels levels);
//     those of larger ranks as method 1 does;
//   - codes lengths as method 1 does;
//   - updates the counters that feed its mixers with updateFast.
//
// On the Linux tar's transform this codes 3.6% smaller than method 1; on the E. coli suffix
// array's, where most ranks are large and the estimate is not made, 0.5% smaller (the gain of
// updateFast). It takes about as many instructions as method 1 (cachegrind, 2 MiB of the tar's
// transform: 820M to code it, where method 1 takes 836M, and 821M to decode it, 816M): the mixes
// of two inputs rather than three pay for the estimates. Those are made with care for speed: the
// sums four ranks at a time and only as far as the decisions need them, the logarithm by
// Mitchell's approximation from a float32's bits, and, when decoding, each estimate before the
// decision before it is known (both children's while a rank's bit is decoded), so that they are
// off the path from one decision to the next.

const (
	freqDecay   = 7       // each run adds 1+2^-freqDecay times what the run before it added
	freqPrior   = 6       // every byte counts as having occurred 2^-freqPrior times besides
	freqStart   = 1 << 10 // what the first run adds
	freqRescale = 1 << 22 // when a run would add more, every count is divided by 2^8
	freqLevels  = 32      // levels of the estimate that choose a rank bit's counter
	freqRanks   = 32      // the estimate is made for decisions among the first freqRanks ranks
)

// runFreq holds the recency-weighted counts of the bytes. A count is the sum of what the runs of
// that byte added; each run adds more than the one before it (inc grows by inc>>freqDecay), which
// weighs a run by 2^-freqDecay less for each run after it, without touching the other counts.
type runFreq struct {
	cnt [256]uint32 // the counts, each below 2^30
	sum uint32      // their sum, below 2^30
	inc uint32      // what the next run adds
}

func (f *runFreq) init() {
	*f = runFreq{inc: freqStart}
}

// add counts a run of c.
func (f *runFreq) add(c byte) {
	f.cnt[c] += f.inc
	f.sum += f.inc
	f.inc += f.inc >> freqDecay
	if f.inc > freqRescale {
		f.rescale()
	}
}

func (f *runFreq) rescale() {
	f.sum = 0
	for i := range f.cnt {
		f.cnt[i] >>= 8
		f.sum += f.cnt[i]
	}
	f.inc >>= 8
}

// prefix is the sums of the counts (each plus the prior) of the bytes at the first ranks of the
// move-to-front list, filled as far as a rank's decisions need: at[k] is the sum over ranks 0..k-1.
type prefix struct {
	at    [freqRanks + 1]uint32
	total uint32 // the sum over all 256 ranks
}

// start fills at[0..4] and total.
func (p *prefix) start(f *runFreq, l *mtfList) {
	pr := f.inc >> freqPrior
	p.total = f.sum + 256*pr
	fill4((*[5]uint32)(p.at[0:5]), &f.cnt, (*[4]byte)(l[0:4]), pr)
}

// fill4 fills at[1..4] from at[0] and the bytes l at the ranks between.
func fill4(at *[5]uint32, cnt *[256]uint32, l *[4]byte, pr uint32) {
	s0 := at[0] + cnt[l[0]] + pr
	s1 := s0 + cnt[l[1]] + pr
	s2 := s1 + cnt[l[2]] + pr
	at[1], at[2], at[3], at[4] = s0, s1, s2, s2+cnt[l[3]]+pr
}

// extend16 fills at[5..16], once start has filled at[0..4].
func (p *prefix) extend16(f *runFreq, l *mtfList) {
	pr := f.inc >> freqPrior
	fill4((*[5]uint32)(p.at[4:9]), &f.cnt, (*[4]byte)(l[4:8]), pr)
	fill4((*[5]uint32)(p.at[8:13]), &f.cnt, (*[4]byte)(l[8:12]), pr)
	fill4((*[5]uint32)(p.at[12:17]), &f.cnt, (*[4]byte)(l[12:16]), pr)
}

// extend32 fills at[17..32], once extend16 has filled at[5..16].
func (p *prefix) extend32(f *runFreq, l *mtfList) {
	pr := f.inc >> freqPrior
	fill4((*[5]uint32)(p.at[16:21]), &f.cnt, (*[4]byte)(l[16:20]), pr)
	fill4((*[5]uint32)(p.at[20:25]), &f.cnt, (*[4]byte)(l[20:24]), pr)
	fill4((*[5]uint32)(p.at[24:29]), &f.cnt, (*[4]byte)(l[24:28]), pr)
	fill4((*[5]uint32)(p.at[28:33]), &f.cnt, (*[4]byte)(l[28:32]), pr)
}

// lg is log2(x) in 1/4096ths plus a constant, for x >= 1, by Mitchell's approximation: the
// exponent and the first 12 bits of the fraction of x as a float32, log2(1+f) taken as f (off by
// at most 0.086). The conversion is IEEE 754's, rounded to nearest, the same on every platform
// Go runs on (and exact below 2^24); nothing else in the models is floating-point.
func lg(x uint32) int32 {
	return int32(math.Float32bits(float32(x)) >> 11)
}

// ratio returns ln(b/a) in the mixers' logistic domain (1/256ths), clamped to ±2047: the
// estimate that the decision between sides of masses a (a 0) and b (a 1) is a 1.
func ratio(b, a uint32) int32 {
	// ln(b/a)*256 = (lg(b)-lg(a))/4096*ln(2)*256, ln(2)/16 = 2839/65536
	return min(max((lg(b)-lg(a))*2839>>16, -2047), 2047)
}

// level quantises an estimate to 0..freqLevels-1.
func level(s int32) int { return int(s+2048) >> 7 }

// encodeRunsFreq appends the method-4 coding of src to out.
func encodeRunsFreq(src []byte, out []byte) []byte { return encodeRunsBy(src, out, true) }

// encodeRankFreq codes r (1..255), the rank of the run's byte in l.
func (m *runModel) encodeRankFreq(e *rangeEncoder, r int, l *mtfList) {
	nb := bits.Len(uint(r)) - 1
	x := m.rankContexts() // method 2's contexts, but for the symbol's own counters
	d, ss, w, pr := x.d, x.ss, x.w, cap3(m.pr)
	lr := m.rankLearn
	p := &m.pre
	p.start(&m.freq, l)
	at := &p.at
	code := func(j int, s int32, bit int) {
		e.encodeMix2v(bit, s, &ss[j], &w[j], lr)
	}
	if nb < 2 {
		code(0, ratio(p.total-at[4], at[4]-at[1]), 0)
		code(1, ratio(at[4]-at[2], at[2]-at[1]), nb)
	} else {
		code(0, ratio(p.total-at[4], at[4]-at[1]), 1)
		p.extend16(&m.freq, l)
		if nb < 4 {
			code(2, ratio(p.total-at[16], at[16]-at[4]), 0)
			code(3, ratio(at[16]-at[8], at[8]-at[4]), nb-2)
		} else {
			code(2, ratio(p.total-at[16], at[16]-at[4]), 1)
			deep := func(j, bit int) {
				e.encodeMix2f(bit, &d[j], &ss[j], &w[j], lr)
			}
			deep(4, min(nb-4, 1))
			if nb > 4 {
				deep(5, min(nb-5, 1))
				if nb > 5 {
					deep(6, nb-6)
				}
			}
		}
	}
	switch {
	case nb == 0:
		return
	case nb >= 5:
		node := 1
		man := &m.rankMan[pr][nb&7]
		for t := nb - 1; t >= 0; t-- {
			bit := (r >> uint(t)) & 1
			e.encodeCounter(bit, &man[node&127])
			node = node<<1 | bit
		}
		return
	case nb == 4:
		p.extend32(&m.freq, l)
	}
	sse := &m.manSSE[nb]
	lo := 1 << uint(nb)
	for t := nb - 1; t >= 0; t-- {
		h := 1 << uint(t)
		bit := (r >> uint(t)) & 1
		e.encodeCounter(bit, &sse[t][level(ratio(at[lo+2*h]-at[lo+h], at[lo+h]-at[lo]))])
		lo += bit << uint(t)
	}
}

// decodeRunsFreq fills dst from the method-4 coding in src.
func decodeRunsFreq(src []byte, dst []byte) error { return decodeRunsBy(src, dst, true) }

func (m *runModel) decodeRankFreq(dec *rangeDecoder, l *mtfList) int {
	x := m.rankContexts() // method 2's contexts, but for the symbol's own counters
	d, ss, w, pr := x.d, x.ss, x.w, cap3(m.pr)
	lr := m.rankLearn
	p := &m.pre
	p.start(&m.freq, l)
	at := &p.at
	code := func(j int, s int32) int {
		return dec.decodeMix2v(s, &ss[j], &w[j], lr)
	}
	deep := func(j int) int {
		return dec.decodeMix2f(&d[j], &ss[j], &w[j], lr)
	}
	// node 1's estimate is made before node 0 is decoded, off the path from one decision to the
	// next
	s0, s1 := ratio(p.total-at[4], at[4]-at[1]), ratio(at[4]-at[2], at[2]-at[1])
	var nb int
	if code(0, s0) == 0 {
		nb = code(1, s1)
	} else {
		p.extend16(&m.freq, l)
		s3 := ratio(at[16]-at[8], at[8]-at[4])
		if code(2, ratio(p.total-at[16], at[16]-at[4])) == 0 {
			nb = 2 + code(3, s3)
		} else if deep(4) == 0 {
			nb = 4
			p.extend32(&m.freq, l)
		} else if deep(5) == 0 {
			nb = 5
		} else {
			nb = 6 + deep(6)
		}
	}
	switch {
	case nb == 0:
		return 1
	case nb >= 5:
		return dec.decodeTree(&m.rankMan[pr][nb&7], nb)
	}
	// each bit's counter is chosen by the estimate for its node; both children's estimates are
	// made while the bit is decoded
	sse := &m.manSSE[nb]
	lo := 1 << uint(nb)
	q := level(ratio(at[2*lo]-at[lo+lo/2], at[lo+lo/2]-at[lo]))
	for t := nb - 1; t > 0; t-- {
		h := 1 << uint(t)
		g := h >> 1
		q0 := level(ratio(at[lo+h]-at[lo+g], at[lo+g]-at[lo]))
		q1 := level(ratio(at[lo+2*h]-at[lo+h+g], at[lo+h+g]-at[lo+h]))
		bit := dec.decodeCounter(&sse[t][q])
		lo += bit << uint(t)
		q = q0 ^ (q0^q1)&-bit
	}
	return lo + dec.decodeCounter(&sse[0][q])
}
