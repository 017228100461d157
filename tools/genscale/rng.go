package main

import (
	"math"
	"math/bits"
)

// Streams name the kinds of work that draw random numbers, so that each piece of work (a chunk,
// a record, an event) has a generator of its own, derived from the seed, the stream and the
// piece's index alone. That is what makes the output independent of the number of threads.
const (
	streamFamilies = iota + 1
	streamChunk
	streamIsochore
	streamSegDupPlan
	streamSegDup
	streamGaps
	streamInversions
	streamDiverge
	streamReads
	streamQualities
)

// rng is a splitmix64 generator: one add and a 64-bit finaliser a number, fast enough to draw
// a random number every eight bases of a genome, and statistically sound for simulation.
type rng struct{ s uint64 }

func mix64(z uint64) uint64 {
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// newRNG returns the generator of piece index of a stream, for a seed.
func newRNG(seed, stream, index uint64) rng {
	s := mix64(seed + 0x243f6a8885a308d3)
	s = mix64(s ^ (stream * 0x9e3779b97f4a7c15))
	s = mix64(s + index*0xd1b54a32d192ed03)
	return rng{s}
}

func (r *rng) next() uint64 {
	r.s += 0x9e3779b97f4a7c15
	return mix64(r.s)
}

// intn returns a uniform integer in [0, n), n > 0 (n may exceed 2^32: genome positions).
func (r *rng) intn(n int) int {
	hi, _ := bits.Mul64(r.next(), uint64(n))
	return int(hi)
}

// rangeIn returns a uniform integer in [lo, hi].
func (r *rng) rangeIn(lo, hi int) int { return lo + r.intn(hi-lo+1) }

// float returns a uniform float in [0, 1).
func (r *rng) float() float64 { return float64(r.next()>>11) * (1.0 / (1 << 53)) }

// uniform returns a uniform float in [lo, hi).
func (r *rng) uniform(lo, hi float64) float64 { return lo + (hi-lo)*r.float() }

func (r *rng) chance(p float64) bool { return r.float() < p }

// exp returns an exponentially distributed float with the given mean.
func (r *rng) exp(mean float64) float64 { return -mean * math.Log(1-r.float()) }

// logUniform returns an integer in [lo, hi] whose logarithm is uniform: as many lengths
// between 1 and 10 kbp as between 10 and 100 kbp.
func (r *rng) logUniform(lo, hi int) int {
	if hi <= lo {
		return lo
	}
	v := int(math.Exp(r.uniform(math.Log(float64(lo)), math.Log(float64(hi)+1))))
	return min(max(v, lo), hi)
}

// skip returns the number of positions before the next event when each position has an event
// with probability p: a geometric variate, so that rare events cost one draw each, not one draw
// a base.
func (r *rng) skip(p float64) int {
	if p <= 0 {
		return math.MaxInt32
	}
	if p >= 1 {
		return 0
	}
	return r.skipLog(math.Log1p(-p))
}

// skipLog is skip for a p given as log(1-p) < 0, computed once for many draws.
func (r *rng) skipLog(logq float64) int {
	v := math.Log(1-r.float()) / logq
	if v > math.MaxInt32 {
		return math.MaxInt32
	}
	return int(v)
}

// logUniformMean is the mean of rng.logUniform(lo, hi), near enough for planning proportions.
func logUniformMean(lo, hi int) float64 {
	if hi <= lo {
		return float64(lo)
	}
	return (float64(hi) - float64(lo)) / math.Log(float64(hi)/float64(lo))
}
