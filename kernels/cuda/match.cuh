// Matching query batches against one page of the reference: kernels/cpu's FM-index search, step for
// step (page.go, lcp.go, occ.go, lanes.go, matcher.go), so that the matches are identical, and the
// kernels that turn the search's findings into compact, ordered match records. Host side: match.go.
//
// A batch is cut into pieces: stretches [from, to) of one query sequence that one thread walks
// backward, keeping the suffix-array interval (lo, hi) of the longest match m of q[pos:] in the
// page. Every query position has a slot (its index in the batch); outputs are ordered by slot.
//
// -maxmatch runs in stages, so that repetitive references do not stall one thread per query:
//   mm_walk   a thread per piece: positions with matches to look at become items (lo, hi, m, slot);
//   mm_chain  a thread per item: the row ranges to look at (the item's interval, then the rows that
//             each enclosing interval adds down to the minimum length), counted then written;
//   mm_rows   a thread per candidate row, a row not preceded by the query's previous symbol (split
//             by the ranges' candidate counts, found by select on the rank structure): ownership,
//             extension past the window's end;
// with scans and compactions in between. -mumreference and -mum (whose candidates are the same)
// keep the best match of each position over the pages (mu_walk) and emit it after the last page.

#include "occ.cuh"

#define MT_CODE_NONE 1
#define MT_FIRST 2
#define MT_OCC_BLOCK 128
#define MT_LCP_ESCAPE 255

// PageDev describes one page's index in device memory; passed by value (kernel parameter space).
// Its layout is pageDev's in match.go.
struct PageDev {
	const u8 *text;     // the whole reference text (codes)
	const int *sa;      // n+1 rows; row 0 is the empty suffix
	const u8 *lcp;      // n+2 rows; MT_LCP_ESCAPE: the value is in bigVal
	const int *bigRow;  // rows whose LCP is >= MT_LCP_ESCAPE, ascending
	const int *bigVal;  //
	const int *min1;    // least LCP of each 64 rows
	const int *min2;    // least of each 64 min1 values
	const u64 *occ;     // rank blocks (kernels/cpu/occ.go)
	const u64 *deep;    // bit k: LCP of row k >= the minimum match length
	const u32 *c;       // c[x]: first row whose suffix starts with x
	const int *up;      // the levels above min2, each the least of 64 of the one below (pg_level)
	const int *bigStart; // bigStart[b]: the side table's first entry at a row >= b << MT_BIG_BUCKET
	u64 start;          // the window's first text position (the text may be over 2^32)
	u32 n;              // window length: the page's rows are its suffixes
	u32 owned;          // the page owns the text positions [start, start + owned)
	u32 tail;           // text after the window, at most 2^32-1 of it (0: the window ends the text)
	u32 nBig;
	u32 planes, counts, stride;
	u32 endRun;         // the window ends in a run of its last symbol this long (0: not a symbol)
	u32 tailRun;        // and the text after it goes on with that symbol this far (Page.tailRun)
	u32 pad;
};

// Piece is a stretch [from, to) of a query sequence at codes + q, whose position from has slot
// `slot` (the next positions the next slots). len codes of the sequence are on the device: all of
// it, or with cut set only the first len (a long record's batch is copied up to some way past its
// last position, not to the record's end). A search that reads up to a cut len, and so may have
// stopped short of a longer match, sets *cutHit: the host then does the launch again with more of
// the sequence. link, where not 0, says that the next piece continues the sequence and starts its
// walk link positions after this one's (its to is this to + link): see piece_start.
struct Piece {
	long long q;
	u32 len, from, to, slot, cut, link;
};

// mt_load8: the eight bytes at a, any alignment, from the two aligned words that hold them (the
// buffer must go on for 8 bytes past a+8 or be aligned to 8 past it: device texts are padded, and a launch's codes are followed by 16 bytes).
__device__ __forceinline__ u64 mt_load8(const u8 *a) {
	u64 at = (u64)a;
	const u64 *base = (const u64 *)(at & ~7ull);
	u32 s = (u32)(at & 7) * 8;
	u64 lo = __ldg(base);
	if (s == 0) return lo;
	return lo >> s | __ldg(base + 1) << (64 - s);
}

// ---- the rank structure -------------------------------------------------------------------------

// pg_rank: rows k < i whose BWT symbol is c (c >= MT_FIRST).
__device__ __forceinline__ u32 pg_rank(const PageDev &p, u32 c, u32 i) {
	return occ_rank(p.occ, p.stride, p.counts, p.planes, c, i);
}

// pg_rank_pair: pg_rank at lo and at hi, with both blocks' count words requested before either is
// used, so that the two blocks (often one) are fetched at once rather than one after the other.
__device__ __forceinline__ void pg_rank_pair(const PageDev &p, u32 c, u32 lo, u32 hi, u32 &r1, u32 &r2) {
	const u64 *blo = p.occ + (u64)(lo / MT_OCC_BLOCK) * p.stride, *bhi = p.occ + (u64)(hi / MT_OCC_BLOCK) * p.stride;
	u32 k = c - OCC_FIRST;
	u64 wlo = __ldg(blo + (k >> 1)), whi = __ldg(bhi + (k >> 1));
	r1 = occ_rank_in(blo, wlo, p.counts, p.planes, c, lo % MT_OCC_BLOCK);
	r2 = occ_rank_in(bhi, whi, p.counts, p.planes, c, hi % MT_OCC_BLOCK);
}

// ---- the compact LCP array ----------------------------------------------------------------------

// MT_BIG_BUCKET: rows of a bucket of PageDev.bigStart (kernels/cpu's bigBucketShift).
#define MT_BIG_BUCKET 10

// pg_big_at: the index in the side table of escaped row k (pg_big's search), among the entries of
// its bucket of 2^MT_BIG_BUCKET rows alone (kernels/cpu's bigIndex): about ten dependent reads
// where a search of the whole table took twenty or more.
__device__ __forceinline__ u32 pg_big_at(const PageDev &p, u32 k) {
	u32 b = k >> MT_BIG_BUCKET;
	u32 lo = (u32)__ldg(p.bigStart + b), hi = (u32)__ldg(p.bigStart + b + 1);
	while (lo < hi) {
		u32 m = (lo + hi) >> 1;
		if ((u32)p.bigRow[m] < k) lo = m + 1;
		else hi = m;
	}
	return lo;
}

// pg_big: the LCP of escaped row k, from the side table.
__device__ __forceinline__ int pg_big(const PageDev &p, u32 k) { return p.bigVal[pg_big_at(p, k)]; }

__device__ __forceinline__ int pg_lcp(const PageDev &p, u32 k) {
	u32 v = __ldg(p.lcp + k);
	return v < MT_LCP_ESCAPE ? (int)v : pg_big(p, k);
}

// pg_less_down: the largest row in [lo, k] whose LCP is < d (d > MT_LCP_ESCAPE), or lo - 1. Row by
// row, but an escaped row's value is the side table's next entry down once the first escaped row's
// is found: one search rather than one a row (a climb from a deep row through a block of escaped
// rows, at a window's end in a gap, searched the side table up to 64 times a level, each search a
// chain of dependent reads: 317 k cycles a climb).
__device__ __forceinline__ int pg_less_down(const PageDev &p, int k, int lo, int d) {
	u32 j = 0xffffffffu;
	for (int i = k; i >= lo; i--) {
		u32 v = __ldg(p.lcp + i);
		if (v < MT_LCP_ESCAPE) {
			if ((int)v < d) return i;
			continue;
		}
		j = j == 0xffffffffu ? pg_big_at(p, (u32)i) : j - 1;
		if (__ldg(p.bigVal + j) < d) return i;
	}
	return lo - 1;
}

// pg_less_up: the least row in [k, hi] whose LCP is < d (d > MT_LCP_ESCAPE), or hi + 1; as
// pg_less_down, upward.
__device__ __forceinline__ int pg_less_up(const PageDev &p, int k, int hi, int d) {
	u32 j = 0xffffffffu;
	for (int i = k; i <= hi; i++) {
		u32 v = __ldg(p.lcp + i);
		if (v < MT_LCP_ESCAPE) {
			if ((int)v < d) return i;
			continue;
		}
		j = j == 0xffffffffu ? pg_big_at(p, (u32)i) : j + 1;
		if (__ldg(p.bigVal + j) < d) return i;
	}
	return hi + 1;
}

__device__ __forceinline__ bool pg_deep(const PageDev &p, u32 k) { return (__ldg(p.deep + (k >> 6)) >> (k & 63)) & 1; }

// pg_level: the block minima of level L >= 1 (1: min1, 2: min2, 3 on: in up, one after the
// other, each the least of 64 entries of the level below; kernels/cpu's compactLCP.levels).
__device__ __forceinline__ const int *pg_level(const PageDev &p, u32 L) {
	if (L == 1) return p.min1;
	if (L == 2) return p.min2;
	u32 len = ((p.n + 2 + 63) / 64 + 63) / 64; // min2's
	const int *a = p.up;
	for (u32 l = 3; l < L; l++) {
		len = (len + 63) / 64;
		a += len;
	}
	return a;
}

// pg_rows_below: bit j set when row 64g+j has an LCP under d, for d <= MT_LCP_ESCAPE (an escaped
// row's is then never under d): the group's 64 bytes in four 16-byte reads (the array is carved
// at 256-byte boundaries and padded to them, so a group is whole), compared four at a time. The
// byte-by-byte scans were most of the walk's time once the levels bounded the climbs.
__device__ __forceinline__ u32 pg_nibble(u32 lt) { // 0xff bytes of __vcmpltu4 to four bits
	lt &= 0x01010101u;
	lt |= lt >> 7;
	lt |= lt >> 14;
	return lt & 0xfu;
}
__device__ __forceinline__ u64 pg_rows_below(const PageDev &p, u32 g, int d) {
	const uint4 *w = (const uint4 *)(p.lcp + (u64)g * 64);
	u32 dd = (u32)d * 0x01010101u;
	u64 m = 0;
#pragma unroll
	for (int i = 0; i < 4; i++) {
		uint4 v = __ldg(w + i);
		u64 q = pg_nibble(__vcmpltu4(v.x, dd)) | pg_nibble(__vcmpltu4(v.y, dd)) << 4 | pg_nibble(__vcmpltu4(v.z, dd)) << 8 |
		        pg_nibble(__vcmpltu4(v.w, dd)) << 12;
		m |= q << (16 * i);
	}
	return m;
}

// pg_prev_smaller: the largest k' <= k whose LCP is < d (d >= 1). Up the levels from the block
// before k's, each level's entries down to the start of their group of 64 (row 0, whose LCP is
// 0, ends the climb at the latest), then down the levels to the last entry under d of each group
// (compactLCP.prevSmaller): at most 64 entries a level, however wide the interval.
__device__ __forceinline__ u32 pg_prev_smaller(const PageDev &p, u32 k, int d) {
	bool bytes = d <= MT_LCP_ESCAPE;
	int i = (int)k;
	if (bytes) {
		u64 m = pg_rows_below(p, k >> 6, d) & ((2ull << (k & 63)) - 1);
		if (m) return (k & ~63u) + 63 - __clzll(m);
		i = (int)(k & ~63u);
	} else {
		i = (int)(k & ~63u);
		int r = pg_less_down(p, (int)k, i, d);
		if (r >= i) return r;
	}
	u32 L = 1;
	int b = (i >> 6) - 1;
	const int *a = p.min1;
	for (;;) {
		while (__ldg(a + b) >= d && (b & 63) != 0) b--;
		if (__ldg(a + b) < d) break;
		a = pg_level(p, ++L);
		b = (b >> 6) - 1;
	}
	while (L > 1) {
		a = pg_level(p, --L);
		for (b = b * 64 + 63; __ldg(a + b) >= d; b--) {
		}
	}
	if (bytes) return (u32)b * 64 + 63 - __clzll(pg_rows_below(p, b, d));
	return pg_less_down(p, b * 64 + 63, b * 64, d);
}

// pg_next_smaller: the smallest k' >= k whose LCP is < d (d >= 1); as pg_prev_smaller, rightward
// (the last row, whose LCP is 0, ends the climb).
__device__ __forceinline__ u32 pg_next_smaller(const PageDev &p, u32 k, int d) {
	bool bytes = d <= MT_LCP_ESCAPE;
	int i = (int)k;
	if (bytes) {
		u64 m = pg_rows_below(p, k >> 6, d) & ~((1ull << (k & 63)) - 1);
		if (m) return (k & ~63u) + __ffsll(m) - 1;
		i = (int)(k & ~63u) + 64;
	} else {
		i = (int)(k & ~63u) + 64;
		int r = pg_less_up(p, (int)k, i - 1, d);
		if (r < i) return r;
	}
	u32 L = 1;
	int b = i >> 6;
	const int *a = p.min1;
	for (;;) {
		while (__ldg(a + b) >= d) {
			if ((++b & 63) == 0) break;
		}
		if ((b & 63) != 0 || __ldg(a + b) < d) break;
		a = pg_level(p, ++L);
		b >>= 6;
	}
	while (L > 1) {
		a = pg_level(p, --L);
		for (b *= 64; __ldg(a + b) >= d; b++) {
		}
	}
	if (bytes) return (u32)b * 64 + __ffsll(pg_rows_below(p, b, d)) - 1;
	return pg_less_up(p, b * 64, b * 64 + 63, d);
}

// ---- the backward search ------------------------------------------------------------------------

// pg_extend_ranked moves the state (rows [lo, hi) of the m-long match) one position left, to a
// query position whose symbol x has ranks r1, r2 at lo, hi, shortening the match until x can
// precede it (Page.extendRanked).
__device__ __forceinline__ void pg_extend_ranked(const PageDev &p, u32 &lo, u32 &hi, u32 &m, u32 x, u32 r1, u32 r2) {
	for (;;) {
		if (r1 < r2) {
			u32 cx = __ldg(p.c + x);
			lo = cx + r1;
			hi = cx + r2;
			m++;
			return;
		}
		if (m == 0) {
			lo = 0;
			hi = p.n + 1;
			return;
		}
		int d = max(pg_lcp(p, lo), pg_lcp(p, hi));
		if (d == 0) {
			lo = 0;
			hi = p.n + 1;
			m = 0;
		} else {
			lo = pg_prev_smaller(p, lo, d);
			hi = pg_next_smaller(p, hi, d);
			m = d;
		}
		r1 = pg_rank(p, x, lo);
		r2 = pg_rank(p, x, hi);
	}
}

__device__ __forceinline__ void pg_extend(const PageDev &p, u32 &lo, u32 &hi, u32 &m, u32 x) {
	if (x < MT_FIRST) {
		lo = 0;
		hi = p.n + 1;
		m = 0;
		return;
	}
	pg_extend_ranked(p, lo, hi, m, x, pg_rank(p, x, lo), pg_rank(p, x, hi));
}

// pg_sym_at: the symbol at offset m of row k's suffix, or -1 past the window's end.
__device__ __forceinline__ int pg_sym_at(const PageDev &p, u32 k, u32 m) {
	u32 s = (u32)__ldg(p.sa + k) + m;
	return s >= p.n ? -1 : (int)p.text[p.start + s];
}

// pg_sym_from: the first row of [a, b) whose symbol at offset m (pg_sym_at) is at least x, or b,
// where the rows are in order of that symbol (they share their first m): pg_start_state's two
// bisections, for the rows before x and for those after it.
__device__ __forceinline__ u32 pg_sym_from(const PageDev &p, u32 a, u32 b, u32 m, int x) {
	while (a < b) {
		u32 mid = (a + b) >> 1;
		if (pg_sym_at(p, mid, m) >= x) b = mid;
		else a = mid + 1;
	}
	return a;
}

// mt_low8: not 0 where one of the eight codes in x (as mt_load8 reads them) is not a symbol (a
// code under MT_FIRST): with x ^ y, mt_same's and piece_long's test of eight symbols.
__device__ __forceinline__ u32 mt_low8(u64 x) {
	return __vcmpltu4((u32)x, 0x02020202u) | __vcmpltu4((u32)(x >> 32), 0x02020202u);
}

// mt_same: the first i >= m, up to end, where a[i] differs from b[i] or is not a symbol (a code
// under MT_FIRST), eight symbols at a time while they last.
__device__ __forceinline__ u32 mt_same(const u8 *a, const u8 *b, u32 m, u32 end) {
	while (m + 8 <= end) {
		u64 x = mt_load8(a + m), y = mt_load8(b + m);
		if ((x ^ y) | mt_low8(x)) break;
		m += 8;
	}
	while (m < end && a[m] >= MT_FIRST && a[m] == b[m]) m++;
	return m;
}

// mt_run: how many times q[pos] repeats from pos on, within q[:len] (pos < len; 1 where q[pos] is
// not a symbol); mm_qrun, pg_run_at and pg_start_state's jump measure a query's runs with it.
__device__ __forceinline__ u32 mt_run(const u8 *q, u32 pos, u32 len) { return 1 + mt_same(q + pos + 1, q + pos, 0, len - pos - 1); }

// pg_run_diag: how far the match of pat[:m] at window position s goes on, comparing from pat[m]
// (at most plen; a cut piece's codes end at plen, so reaching it sets *cutHit).
__device__ __forceinline__ u32 pg_run_diag(const PageDev &p, const u8 *pat, u32 plen, u32 s, u32 m, const Piece &pc, u32 *cutHit) {
	m = mt_same(pat, p.text + p.start + s, m, min(plen, p.n - s));
	if (m == plen && s + m < p.n && pc.cut) *cutHit = 1;
	return m;
}

// Runs of one symbol (a gap of N, a homopolymer). Under -maxmatch, inside a query's run of x (k of
// it from the position on), every enclosing interval from some depth d <= k on is x^j's, one level
// a symbol of the run, so the climb would take as many levels as the run is long, at every position
// of it: quadratic in the run (a gap of N against gaps of N). From a level of depth at least
// runFrom, mm_chain ends the climb at once (the rows of the levels left have matches of min(d,
// their own run of x)):
//   - with x before the position too, the only rows of those levels not preceded by x are the
//     starts of the window's runs of x: a "run range" of the page's list of runs, by length
//     (kernels/cpu's emitRuns);
//   - at the run's first position, every row of those levels is a match (one a text position of
//     the window's runs of x): a "climb range", the rows of the interval at the minimum length
//     not yet emitted, each one's length taken from the run it starts in (found in the list by
//     position).
// A start state inside a run is moved on from the same lists (pg_run_jump). The lists (by
// symbol, from runOff[x] to runOff[x+1], for the symbols with a run of runFrom; page_build.cuh's
// rl_mark and rl_list find them) hold the runs at least the minimum length long: runs, as (window
// position, length, next code or MT_RUN_END at the window's end, 0) by length then next code;
// runsPos, as (position, length) by position.
#define MT_RUN_RANGE 0xffffffffu // a range's rank field when it is a run range
#define MT_CLIMB 0x80000000u     // a range's item field when it is a climb range
#define MT_RUN_END 0x100u        // next code of a run that ends the window
#define MT_RUN_CUT 0x80000000u   // mm_qrun: the run reaches a cut piece's codes (it is at least that long)

// RunLists are a page's lists of runs of one symbol (see MT_RUN_RANGE); K, the least depth from
// which a start state inside a run is moved on by them (pg_run_jump; 0: never): at least the
// minimum length, so that every run at least K long is listed.
struct RunLists {
	const uint4 *runs;
	const u32 *runOff;
	u32 K;
	u32 *jumps; // start states moved on
};

// pg_run_jump: the search of pg_start_state at (lo, hi) = the rows of x^m (x = pat[0], m >= K,
// more than one row) where pat begins with k >= m x's, moved on at once rather than a symbol of
// the run at a time (a piece inside a gap of N against an assembly's gaps searched the rest of
// the gap). Within the rows that start with x, those whose run is followed by a smaller code (or
// the window's end) come first, by increasing run length, and those followed by a larger code
// last, by decreasing length; so the rows of x^J, J = min(k, the window's longest run of x), are
// x^m's less the suffixes with m to J-1 x's of each listed run at least m long, on its side. At
// J = k the rows of x^k y (y = pat[k]) are those with exactly k x's (one a run at least k long)
// followed by y: a block at the start of x^k's rows (y < x) or at its end (y > x), ordered by the
// code after the run. It returns whether the search goes on (from x^k y's rows, m = k+1, or from
// x^J's where they are one row).
__device__ __forceinline__ bool pg_run_jump(const PageDev &p, const RunLists &rl, const u8 *pat, u32 plen, u32 k, u32 &lo, u32 &hi,
                                            u32 &m) {
	u32 x = pat[0], r0 = __ldg(rl.runOff + x), r1 = __ldg(rl.runOff + x + 1);
	u32 J = min(k, __ldg(&rl.runs[r1 - 1].y));
	if (J <= m) return true;
	// The runs at least m long: by length, so from the first of them on.
	u32 a = r0, b = r1;
	while (a < b) {
		u32 mid = (a + b) >> 1;
		if (__ldg(&rl.runs[mid].y) < m) a = mid + 1;
		else b = mid;
	}
	bool toY = J == k && k < plen && pat[k] >= MT_FIRST;
	u32 y = toY ? pat[k] : 0, before = 0, same = 0;
	for (u32 i = a; i < r1; i++) {
		uint4 r = __ldg(rl.runs + i);
		bool lower = r.z == MT_RUN_END || r.z < x;
		u32 c = min(r.y, J - 1) - m + 1;
		if (lower) lo += c;
		else hi -= c;
		if (toY && r.y >= k) {
			if (r.z == y) same++;
			else if (y < x ? lower && (r.z == MT_RUN_END || r.z < y) : !lower && r.z > y) before++;
		}
	}
	atomicAdd(rl.jumps, 1u);
	m = J;
	if (toY && same > 0) {
		lo = y < x ? lo + before : hi - before - same;
		hi = lo + same;
		m = k + 1;
		return true;
	}
	// No row goes on: the search stops at x^J's rows, unless they are one, which it compares on.
	return hi - lo == 1;
}

// pg_start_state: the state of q[to:len] (Page.startState and longestPrefix): the rows and length
// of its longest prefix that occurs in the window. It returns PS_EXACT, or for a match that is one
// row: with cap > 0, PS_OPEN where it is at least cap long (m is then cap, and piece_link finds
// the rest from the next piece's); without, PS_LONG where it is at least PS_LONG_AT symbols longer
// than when it became one row (m is that far, and piece_long compares on with the whole grid).
#define PS_EXACT 0
#define PS_OPEN 1
#define PS_LONG 2
#define PS_LONG_AT 4096
__device__ __forceinline__ u32 pg_start_state(const PageDev &p, const u8 *q, const Piece &pc, u32 cap, u32 *cutHit, const RunLists &rl,
                                              u32 &lo, u32 &hi, u32 &m) {
	lo = 0;
	hi = p.n + 1;
	m = 0;
	if (pc.to >= pc.len) {
		if (pc.cut) *cutHit = 1;
		return PS_EXACT;
	}
	const u8 *pat = q + pc.to;
	u32 plen = pc.len - pc.to;
	bool jumped = rl.K == 0;
	while (m < plen) {
		u32 x = pat[m];
		if (x < MT_FIRST) break;
		if (!jumped && m >= rl.K && hi - lo > 1) {
			// Inside a run of a listed symbol: moved on from the run's lengths (pg_run_jump).
			jumped = true;
			u32 x0 = pat[0];
			if (__ldg(rl.runOff + x0) < __ldg(rl.runOff + x0 + 1)) {
				u32 k = mt_run(pat, 0, plen);
				if (k >= m && !pg_run_jump(p, rl, pat, plen, k, lo, hi, m)) break;
				if (m >= plen) break;
				x = pat[m];
				if (x < MT_FIRST) break;
			}
		}
		if (hi - lo == 1) {
			u32 s = (u32)p.sa[lo];
			if (cap > 0 && cap <= plen) {
				m = mt_same(pat, p.text + p.start + s, m, min(cap, p.n - s));
				if (m >= cap) {
					m = cap;
					return PS_OPEN;
				}
				return PS_EXACT;
			}
			u32 end = min(plen, p.n - s);
			if (end - m > PS_LONG_AT) {
				u32 at = m + PS_LONG_AT;
				m = mt_same(pat, p.text + p.start + s, m, at);
				if (m == at) return PS_LONG;
			}
			m = pg_run_diag(p, pat, plen, s, m, pc, cutHit);
			return PS_EXACT;
		}
		// The rows share the symbols on which their first and last agree: the pattern is
		// compared with them at once, and the rows split only where they differ (a query in a
		// satellite array otherwise searched the rows symbol by symbol, for the array's length).
		u32 s1 = (u32)p.sa[lo], s2 = (u32)p.sa[hi - 1];
		u32 e = min(min(p.n - s1, p.n - s2), plen);
		if (e > m + 1) {
			const u8 *t1 = p.text + p.start + s1;
			u32 l = mt_same(t1, p.text + p.start + s2, m, e);
			if (l > m) {
				u32 k = mt_same(pat, t1, m, l);
				m = k;
				if (k < l || k == plen) break; // every row differs from the pattern at k
				x = pat[m];
				if (x < MT_FIRST) break;
			}
		}
		// The rows whose symbol at m is x (Page.rowsOf). The two rows at each end are looked at
		// first: in a run or a tandem array the rows leave a row or two at a time, at an end.
		u32 a = lo, b = hi;
		if (pg_sym_at(p, a, m) < (int)x) {
			a++;
			if (a < b && pg_sym_at(p, a, m) < (int)x) a = pg_sym_from(p, a + 1, b, m, (int)x);
		}
		if (a < b && pg_sym_at(p, b - 1, m) > (int)x) {
			b--;
			if (a < b && pg_sym_at(p, b - 1, m) > (int)x) b = pg_sym_from(p, a, b - 1, m, (int)x + 1);
		}
		if (a == b) break;
		lo = a;
		hi = b;
		m++;
	}
	if (m == plen && pc.cut) *cutHit = 1;
	return PS_EXACT;
}

// Start states. A piece's walk starts from the state of q[to:], whose match may run on for the
// rest of the sequence (a sequence against itself, or two assemblies of one genome: millions of
// symbols), and every piece on such a stretch would compare it to its end. Instead:
//   piece_start  a thread per piece: the state, with a match that is one row compared only up to
//                the next piece's start (Piece.link): such a piece is "open"; a piece without a
//                next piece whose match goes on for thousands of symbols is listed for
//   piece_long   the whole grid on each listed piece in turn, which compares on at memory speed;
//   piece_link   a thread per piece: an open piece whose next piece's match is that row's
//                suffix link chain's, one row at the text position link symbols on (so the same
//                diagonal), has the next piece's length plus link: the piece is "linked" to the
//                next. Other open pieces compare on to the match's end. Within each block of
//                pieces, the first piece at or after each one that is not linked (its "end").
// The walk (pg_load_start) takes a linked piece's length from its chain's end: the end's to plus
// its length, less the piece's to. Every length is then exact, the same as the search's, and a
// stretch of matching sequence is compared once rather than once a piece.
#define PL_BLOCK 256
#define PL_NONE 0xffffffffu

extern "C" __global__ void __launch_bounds__(128) piece_start(const PageDev p, const u8 *__restrict__ codes, const Piece *__restrict__ pieces,
                                                              u32 nPieces, uint4 *__restrict__ starts, uint4 *__restrict__ longList,
                                                              u32 *nLong, u32 *cutHit, const uint4 *__restrict__ runs,
                                                              const u32 *__restrict__ runOff, u32 runK, u32 *jumps) {
	u32 t = blockIdx.x * blockDim.x + threadIdx.x;
	if (t >= nPieces) return;
	Piece pc = pieces[t];
	RunLists rl = {runs, runOff, runOff ? runK : 0u, jumps};
	u32 lo, hi, m;
	u32 kind = pg_start_state(p, codes + pc.q, pc, pc.link, cutHit, rl, lo, hi, m);
	if (kind == PS_LONG) {
		// Listed: the piece, how far it matches, where the comparison ends (piece_long lowers
		// it to the first symbol that differs), the row's text position. m becomes the index.
		u32 i = atomicAdd(nLong, 1), s = (u32)__ldg(p.sa + lo);
		longList[i] = make_uint4(t, m, min(pc.len - pc.to, p.n - s), s);
		m = i;
	}
	starts[t] = make_uint4(lo, hi, m, kind);
}

// piece_long: every thread of the grid takes 32 symbols of each listed piece's comparison in
// turn, the grid's threads one after the other, and lowers the list's end to the first symbol
// that differs in them; a thread stops where that end is before its symbols. A match of a sequence
// against itself, millions of symbols, is compared at the memory's speed, not one thread's.
extern "C" __global__ void __launch_bounds__(256) piece_long(const PageDev p, const u8 *__restrict__ codes, const Piece *__restrict__ pieces,
                                                             uint4 *longList, const u32 *nLong, u32 *longTotal) {
	u32 n = *nLong;
	if (blockIdx.x == 0 && threadIdx.x == 0 && n > 0) atomicAdd(longTotal, n);
	u64 first = (u64)blockIdx.x * blockDim.x + threadIdx.x, stride = (u64)gridDim.x * blockDim.x;
	for (u32 i = 0; i < n; i++) {
		uint4 L = longList[i];
		Piece pc = pieces[L.x];
		const u8 *pat = codes + pc.q + pc.to, *tx = p.text + p.start + L.w;
		u32 *stop = &longList[i].z;
		for (u64 c = first;; c += stride) {
			u64 at64 = L.y + c * 32;
			u32 e = *(volatile u32 *)stop;
			if (at64 >= e) break;
			u32 at = (u32)at64;
			e = min(e, at + 32);
			if (e - at == 32) {
				u64 x[4], y[4];
#pragma unroll
				for (int j = 0; j < 4; j++) {
					x[j] = mt_load8(pat + at + 8 * j);
					y[j] = mt_load8(tx + at + 8 * j);
				}
				u64 d = 0;
				u32 low = 0;
#pragma unroll
				for (int j = 0; j < 4; j++) {
					d |= x[j] ^ y[j];
					low |= mt_low8(x[j]);
				}
				if ((d | low) == 0) continue;
			}
			u32 k = mt_same(pat, tx, at, e);
			if (k < e) atomicMin(stop, k);
		}
	}
}

// piece_link: ends[t] is the length of piece t's start state where it is not linked (exact now),
// and in the high word the first piece at or after t, in t's block of PL_BLOCK pieces, that is not
// linked (PL_NONE: none); blockEnd[b] is block b's first such piece. *linked counts linked pieces.
extern "C" __global__ void __launch_bounds__(PL_BLOCK) piece_link(const PageDev p, const u8 *__restrict__ codes, const Piece *__restrict__ pieces,
                                                                  u32 nPieces, const uint4 *__restrict__ starts,
                                                                  const uint4 *__restrict__ longList, uint2 *__restrict__ ends,
                                                                  u32 *__restrict__ blockEnd, u32 *linked, u32 *cutHit) {
	typedef cub::BlockScan<u32, PL_BLOCK> S;
	__shared__ typename S::TempStorage tmp;
	// Thread j holds piece base + PL_BLOCK-1-j, so that the block's prefix minimum is the pieces'
	// minimum from each piece to the block's end.
	u32 base = blockIdx.x * PL_BLOCK, t = base + PL_BLOCK - 1 - threadIdx.x;
	bool link = false;
	u32 m = 0;
	if (t < nPieces) {
		uint4 st = starts[t];
		m = st.z;
		if (st.w == PS_LONG) {
			Piece pc = pieces[t];
			uint4 L = longList[st.z];
			m = L.z;
			if (m == pc.len - pc.to && L.w + m < p.n && pc.cut) *cutHit = 1;
		} else if (st.w == PS_OPEN) {
			Piece pc = pieces[t];
			u32 s = (u32)__ldg(p.sa + st.x);
			uint4 nx = starts[t + 1];
			if (nx.y - nx.x == 1 && (u32)__ldg(p.sa + nx.x) == s + pc.link) {
				link = true;
			} else {
				m = pg_run_diag(p, codes + pc.q + pc.to, pc.len - pc.to, s, m, pc, cutHit);
			}
		}
	}
	u32 end = t < nPieces && !link ? t : PL_NONE;
	S(tmp).InclusiveScan(end, end, cub::Min());
	u32 n = __syncthreads_count(link);
	if (t < nPieces) ends[t] = make_uint2(m, end);
	if (threadIdx.x == PL_BLOCK - 1) blockEnd[blockIdx.x] = end;
	if (threadIdx.x == 0 && n > 0) atomicAdd(linked, n);
}

// pg_load_start: piece t's start state (see piece_start).
__device__ __forceinline__ void pg_load_start(const Piece *__restrict__ pieces, const uint4 *__restrict__ starts, const uint2 *__restrict__ ends,
                                              const u32 *__restrict__ blockEnd, u32 t, const Piece &pc, u32 &lo, u32 &hi, u32 &m) {
	uint4 st = starts[t];
	uint2 e = ends[t];
	lo = st.x;
	hi = st.y;
	m = e.x;
	if (e.y == t) return;
	u32 j = e.y;
	for (u32 b = t / PL_BLOCK + 1; j == PL_NONE; b++) j = blockEnd[b];
	m = pieces[j].to + ends[j].x - pc.to;
}

// pg_tail_same: how far q[at:] matches the text after the window (at <= pc.len), compared eight
// symbols at a time; *cutHit is set where the codes on the device end it (see Piece). pg_run_on
// and pg_tail_match compare with it.
__device__ __forceinline__ u32 pg_tail_same(const PageDev &p, const u8 *q, const Piece &pc, u32 *cutHit, u32 at) {
	u32 tl = p.tail, ql = pc.len - at;
	u32 n = mt_same(q + at, p.text + p.start + p.n, 0, min(tl, ql));
	if (n == ql && n < tl && pc.cut) *cutHit = 1;
	return n;
}

// pg_tail_run: how far a match that reaches the window's end in a run of the window's last symbol
// runs on, where the text after the window goes on with that symbol for p.tailRun and the query
// for r more: the shorter run, set in on, unless both are as long (false: only a comparison of
// what follows them says). mm_rows and pg_tail_match take this shortcut; where the query's run
// reaches a cut piece's codes' end, mm_rows compares instead and pg_tail_match sets *cutHit.
__device__ __forceinline__ bool pg_tail_run(const PageDev &p, u32 r, u32 &on) {
	if (r == p.tailRun) return false;
	on = min(r, p.tailRun);
	return true;
}

// pg_run_on: how far the match of length d of q[pos:] at window position s continues past the
// window's end, in the whole text (kernels/cpu's tailWalk.tailMatch); *cutHit as pg_tail_same.
__device__ __forceinline__ u32 pg_run_on(const PageDev &p, u32 s, u32 d, const u8 *q, const Piece &pc, u32 *cutHit, u32 pos) {
	if (s + d != p.n || p.tail == 0) return 0;
	return pg_tail_same(p, q, pc, cutHit, pos + d);
}

// pg_left_maximal: the match of q[pos:] at window position s cannot be extended to the left.
__device__ __forceinline__ bool pg_left_maximal(const PageDev &p, u32 s, const u8 *q, u32 pos) {
	if (pos == 0) return true;
	u32 prev = q[pos - 1];
	if (prev < MT_FIRST) return true;
	u64 g = p.start + s;
	return g == 0 || p.text[g - 1] != prev;
}

// ---- -maxmatch ----------------------------------------------------------------------------------

// mm_qrun: how many times q[pos] repeats from pos on in the codes on the device, with MT_RUN_CUT
// where that is up to a cut piece's end (the low bits then a lower bound).
__device__ __forceinline__ u32 mm_qrun(const u8 *q, const Piece &pc, u32 pos) {
	u32 k = mt_run(q, pos, pc.len);
	if (k >= MT_RUN_CUT) return (MT_RUN_CUT - 1) | MT_RUN_CUT; // a lower bound as well
	return pos + k == pc.len && pc.cut ? k | MT_RUN_CUT : k;
}

// mm_qrun_left: mm_qrun one position left, where that symbol is the same.
__device__ __forceinline__ u32 mm_qrun_left(u32 r) { return (r & ~MT_RUN_CUT) + 1 >= MT_RUN_CUT ? r : r + 1; }

// mm_run_bound: the first of rs[0, n) whose (length, next) is past (len, next), with inclusive, or
// at or past it.
__device__ __forceinline__ u32 mm_run_bound(const uint4 *rs, u32 n, u32 len, u32 next, bool inclusive) {
	u32 lo = 0, hi = n;
	while (lo < hi) {
		u32 mid = (lo + hi) >> 1;
		uint4 r = __ldg(rs + mid);
		bool before = r.y < len || (r.y == len && (r.z < next || (inclusive && r.z == next)));
		if (before) lo = mid + 1;
		else hi = mid;
	}
	return lo;
}

// mm_walk: a thread per piece walks it backward and records the positions whose matches must be
// looked at: those with a match of at least minLen that is not entirely preceded by the query's
// previous symbol, or whose enclosing intervals reach minLen. Items (lo, hi, m, slot) and their
// piece fill the piece's own slots from the end, in ascending slot order; counts[t] is how many.
extern "C" __global__ void __launch_bounds__(128) mm_walk(const PageDev p, const u8 *__restrict__ codes, const Piece *__restrict__ pieces,
                                                          u32 nPieces, const uint4 *__restrict__ starts, const uint2 *__restrict__ ends,
                                                          const u32 *__restrict__ blockEnd, u32 minLen, uint4 *__restrict__ items,
                                                          u32 *__restrict__ itemPiece, u32 *__restrict__ counts, u32 *__restrict__ qrun) {
	u32 t = blockIdx.x * blockDim.x + threadIdx.x;
	if (t >= nPieces) return;
	Piece pc = pieces[t];
	const u8 *q = codes + pc.q;
	u32 end = pc.slot + (pc.to - pc.from);
	u32 w = end;
	if (pc.from < pc.to) {
		u32 lo, hi, m;
		pg_load_start(pieces, starts, ends, blockEnd, t, pc, lo, hi, m);
		int pos = (int)pc.to - 1;
		pg_extend(p, lo, hi, m, q[pos]);
		u32 run = 0; // the run of q[pos] from pos on, as mm_chain reads it (mm_qrun); 0: not measured
		for (;;) {
			u32 prev = pos > 0 ? q[pos - 1] : MT_CODE_NONE;
			bool ranked = prev >= MT_FIRST;
			// The deep bits are requested with the ranks rather than after them.
			bool long_ = m >= minLen;
			u64 dlo = 0, dhi = 0;
			if (long_) {
				dlo = __ldg(p.deep + (lo >> 6));
				dhi = __ldg(p.deep + (hi >> 6));
			}
			u32 r1 = 0, r2 = 0;
			if (ranked) pg_rank_pair(p, prev, lo, hi, r1, r2);
			if (long_ && (!ranked || r2 - r1 < hi - lo || (dlo >> (lo & 63) & 1) || (dhi >> (hi & 63) & 1))) {
				w--;
				u32 slot = pc.slot + ((u32)pos - pc.from);
				items[w] = make_uint4(lo, hi, m, slot);
				itemPiece[w] = t;
				// For mm_chain's runs (MT_RUN_RANGE).
				if (run == 0) run = mm_qrun(q, pc, (u32)pos);
				qrun[slot] = run;
			}
			if (run != 0) run = prev == q[pos] ? mm_qrun_left(run) : 0;
			if (--pos < (int)pc.from) break;
			if (ranked) {
				pg_extend_ranked(p, lo, hi, m, prev, r1, r2);
			} else {
				lo = 0;
				hi = p.n + 1;
				m = 0;
			}
		}
	}
	counts[t] = end - w;
}

// compact_pieces: copies each piece's counts[t] records (at the end of its slots) to offs[t]
// (and, when srcSide is not null, their side values), a warp per piece.
extern "C" __global__ void __launch_bounds__(128) compact_pieces(const Piece *__restrict__ pieces, u32 nPieces, const u32 *__restrict__ counts,
                                                                 const u32 *__restrict__ offs, const uint4 *__restrict__ src,
                                                                 const u32 *__restrict__ srcSide, uint4 *__restrict__ dst, u32 *__restrict__ dstSide) {
	u32 t = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
	u32 lane = threadIdx.x & 31;
	if (t >= nPieces) return;
	u32 n = counts[t];
	if (n == 0) return;
	Piece pc = pieces[t];
	u32 base = pc.slot + (pc.to - pc.from) - n, o = offs[t];
	for (u32 j = lane; j < n; j += 32) {
		dst[o + j] = src[base + j];
		if (srcSide) dstSide[o + j] = srcSide[base + j];
	}
}

// mm_chain: for items [0, nItems) (item i0+i), the row ranges that may hold matches, in Page's
// order: the item's interval at its match length, then the rows each enclosing interval adds, at
// its depth, while the depth is at least minLen. A range's candidates are its rows whose BWT
// symbol is not the query's previous symbol (all of them when there is none): the others continue
// a match one position earlier and are not left-maximal; a range without candidates is left out.
// With ranges null it counts: ranges to rangeCnt[i], candidates to itemRows[i] and to *totalRows;
// otherwise it writes range (first row, rank of the previous symbol at that row, depth, item) and
// its candidate count from rangeOff[i].
extern "C" __global__ void __launch_bounds__(128) mm_chain(const PageDev p, const u8 *__restrict__ codes, const Piece *__restrict__ pieces,
                                                           const uint4 *__restrict__ items, const u32 *__restrict__ itemPiece, u32 i0, u32 nItems,
                                                           u32 *__restrict__ rangeCnt, u32 *__restrict__ itemRows,
                                                           unsigned long long *__restrict__ totalRows, const u32 *__restrict__ rangeOff,
                                                           uint4 *__restrict__ ranges, u32 *__restrict__ rowCnt, const uint4 *__restrict__ runs,
                                                           const u32 *__restrict__ runOff, const u32 *__restrict__ qrun, u32 runFrom,
                                                           u32 minLen, u32 *cutHit, u32 *runItems) {
	u32 i = blockIdx.x * blockDim.x + threadIdx.x;
	u32 rows = 0;
	if (i < nItems) {
		u32 it = i0 + i;
		uint4 item = items[it];
		Piece pc = pieces[itemPiece[it]];
		u32 pos = pc.from + (item.w - pc.slot);
		const u8 *q = codes + pc.q;
		u32 prev = pos > 0 ? q[pos - 1] : MT_CODE_NONE;
		bool check = prev >= MT_FIRST;
		u32 cnt = 0;
		u32 o = ranges ? rangeOff[i] : 0;
		auto emit = [&](u32 a, u32 b, u32 d, u32 flag) {
			if (a >= b) return;
			u32 c = b - a, r1 = 0;
			if (check) {
				u32 r2;
				pg_rank_pair(p, prev, a, b, r1, r2);
				c -= r2 - r1;
				if (c == 0) return;
			}
			if (ranges) {
				ranges[o + cnt] = make_uint4(a, r1, d, it | flag);
				rowCnt[o + cnt] = c;
			}
			cnt++;
			rows += c;
		};
		// The runs of q[pos] (mm_walk measured its run, k of it): from the first level of depth
		// at least runFrom and at most k, a run range or climb ranges (see MT_RUN_RANGE).
		u32 x = q[pos], r0 = 0, nr = 0;
		if (runOff) {
			r0 = __ldg(runOff + x);
			nr = __ldg(runOff + x + 1) - r0;
		}
		auto emitRuns = [&](u32 from, u32 n, u32 d) {
			if (n == 0) return;
			if (ranges) {
				ranges[o + cnt] = make_uint4(from, MT_RUN_RANGE, d, it);
				rowCnt[o + cnt] = n;
			}
			cnt++;
			rows += n;
		};
		emit(item.x, item.y, item.z, 0);
		u32 a = item.x, b = item.y;
		while (pg_deep(p, a) || pg_deep(p, b)) {
			int d = max(pg_lcp(p, a), pg_lcp(p, b));
			if (nr > 0 && (u32)d >= runFrom) {
				u32 qr = qrun[item.w], k = qr & ~MT_RUN_CUT;
				bool exact = !(qr & MT_RUN_CUT);
				if ((u32)d < k || ((u32)d == k && exact)) {
					const uint4 *rs = runs + r0;
					if (prev != x) {
						// Every row of the levels left, at once.
						emit(pg_prev_smaller(p, a, minLen), a, d, MT_CLIMB);
						emit(b, pg_next_smaller(p, b, minLen), d, MT_CLIMB);
					} else if ((u32)d < k) {
						// The runs up to d long, each matching its length.
						emitRuns(r0, mm_run_bound(rs, nr, d, MT_RUN_END, true), d);
					} else {
						// All but those exactly k long followed by q[pos+k]: those are in the
						// deeper interval, already emitted with their longer match.
						u32 y = pos + k < pc.len ? q[pos + k] : MT_RUN_END + 1;
						u32 x0 = mm_run_bound(rs, nr, k, y, false), x1 = mm_run_bound(rs, nr, k, y, true);
						emitRuns(r0, x0, d);
						emitRuns(r0 + x1, nr - x1, d);
					}
					if (!ranges) atomicAdd(runItems, 1u);
					break;
				}
				if (!exact && (u32)d >= k && pc.cut) {
					// The run goes on past the codes on the device: the launch is done again with
					// more of them (rather than climbing a level a symbol of the run here).
					*cutHit = 1;
					break;
				}
			}
			u32 na = pg_prev_smaller(p, a, d), nb = pg_next_smaller(p, b, d);
			emit(na, a, d, 0);
			emit(b, nb, d, 0);
			a = na;
			b = nb;
		}
		if (!ranges) {
			rangeCnt[i] = cnt;
			itemRows[i] = rows;
		}
	}
	if (!ranges) {
		// One atomic a warp.
		unsigned long long sum = rows;
		for (int o = 16; o > 0; o >>= 1) sum += __shfl_down_sync(0xffffffffu, sum, o);
		if ((threadIdx.x & 31) == 0 && sum) atomicAdd(totalRows, sum);
	}
}

// pg_select32: the position of the r-th (from 0) set bit of w, which has more than r.
__device__ __forceinline__ u32 pg_select32(u32 w, u32 r) {
	u32 pos = 0, c;
	c = __popc(w & 0xffffu);
	if (r >= c) r -= c, w >>= 16, pos += 16;
	c = __popc(w & 0xffu);
	if (r >= c) r -= c, w >>= 8, pos += 8;
	c = __popc(w & 0xfu);
	if (r >= c) r -= c, w >>= 4, pos += 4;
	c = __popc(w & 0x3u);
	if (r >= c) r -= c, w >>= 2, pos += 2;
	return pos + (r >= (w & 1u) ? 1u : 0u);
}

// pg_other_before: rows before block b (its first row) whose BWT symbol is not c.
__device__ __forceinline__ u32 pg_other_before(const PageDev &p, u32 c, u32 b) {
	const u64 *blk = p.occ + (u64)b * p.stride;
	u32 k = c - OCC_FIRST;
	return b * MT_OCC_BLOCK - (u32)(__ldg(blk + (k >> 1)) >> (32 * (k & 1)));
}

// pg_select_other: the row of the j-th (from 0) row at or after a whose BWT symbol is not c (c >=
// MT_FIRST), given rc, the rows before a whose symbol is c; the row must exist. Its block is found
// by galloping then bisecting on the blocks' counts from a's block, then its place in the block
// from the bit planes.
__device__ __forceinline__ u32 pg_select_other(const PageDev &p, u32 c, u32 a, u32 rc, u32 j) {
	u32 t = a - rc + j; // rows before the one sought whose symbol is not c
	u32 last = p.n / MT_OCC_BLOCK;
	u32 lo = a / MT_OCC_BLOCK, step = 1, hi;
	for (;;) {
		u32 b = lo + step;
		if (b > last) {
			hi = last + 1;
			break;
		}
		if (pg_other_before(p, c, b) > t) {
			hi = b;
			break;
		}
		lo = b;
		step *= 2;
	}
	while (hi - lo > 1) {
		u32 mid = (lo + hi) >> 1;
		if (pg_other_before(p, c, mid) <= t) lo = mid;
		else hi = mid;
	}
	u32 r = t - pg_other_before(p, c, lo);
	const u64 *pl = p.occ + (u64)lo * p.stride + p.counts;
	u64 eq0 = ~0ull, eq1 = ~0ull;
	for (u32 s = 0; s < p.planes; s++) {
		u64 x = __ldg(pl + 2 * s), y = __ldg(pl + 2 * s + 1);
		if (!((c >> s) & 1)) {
			x = ~x;
			y = ~y;
		}
		eq0 &= x;
		eq1 &= y;
	}
	u64 w = ~eq0;
	u32 base = lo * MT_OCC_BLOCK;
	u32 n0 = __popcll(w);
	if (r >= n0) {
		r -= n0;
		w = ~eq1;
		base += 64;
	}
	u32 n32 = __popc((u32)w);
	if (r >= n32) return base + 32 + pg_select32((u32)(w >> 32), r - n32);
	return base + pg_select32((u32)w, r);
}

// mm_rows: candidates [r0, r0+nRows) of the ranges (whose first candidates are at rowOff): each
// candidate row that is owned by the page and left-maximal in the whole text becomes a match
// record (text position, length, slot) in cand[r], with valid[r] set.
extern "C" __global__ void __launch_bounds__(256) mm_rows(const PageDev p, const u8 *__restrict__ codes, const Piece *__restrict__ pieces,
                                                          const uint4 *__restrict__ items, const u32 *__restrict__ itemPiece,
                                                          const uint4 *__restrict__ ranges, const u32 *__restrict__ rowOff, u32 nRanges, u32 r0,
                                                          u32 nRows, uint4 *__restrict__ cand, u32 *__restrict__ valid, u32 *cutHit,
                                                          const uint4 *__restrict__ runs, const uint2 *__restrict__ runsPos,
                                                          const u32 *__restrict__ runOff, const u32 *__restrict__ qrun) {
	u32 r = blockIdx.x * blockDim.x + threadIdx.x;
	if (r >= nRows) return;
	u32 row = r0 + r;
	u32 lo = 0, hi = nRanges;
	while (hi - lo > 1) {
		u32 mid = (lo + hi) >> 1;
		if (rowOff[mid] <= row) lo = mid;
		else hi = mid;
	}
	uint4 rg = ranges[lo];
	u32 j = row - rowOff[lo], d = rg.z, it = rg.w & ~MT_CLIMB;
	uint4 item = items[it];
	Piece pc = pieces[itemPiece[it]];
	u32 pos = pc.from + (item.w - pc.slot);
	const u8 *q = codes + pc.q;
	u32 prev = pos > 0 ? q[pos - 1] : MT_CODE_NONE;
	u32 s;
	bool run = rg.y == MT_RUN_RANGE;
	if (run) {
		// A run range's j-th run: its start, matching its length or d, whichever is less.
		uint4 rn = __ldg(runs + rg.x + j);
		s = rn.x;
		d = min(rn.y, d);
	} else {
		u32 k = prev >= MT_FIRST ? pg_select_other(p, prev, rg.x, rg.y, j) : rg.x + j;
		s = (u32)p.sa[k];
		if (rg.w & MT_CLIMB) {
			// A climb range's row matches d or its own run of q[pos], whichever is less: the
			// run it starts in, the last of the list to start at or before it.
			u32 x = q[pos], first = __ldg(runOff + x), a = 0, b = __ldg(runOff + x + 1) - first;
			const uint2 *rp = runsPos + first;
			while (b - a > 1) {
				u32 mid = (a + b) >> 1;
				if (__ldg(&rp[mid].x) <= s) a = mid;
				else b = mid;
			}
			uint2 rn = __ldg(rp + a);
			d = min(rn.x + rn.y - s, d);
			run = true;
		}
	}
	// A match of a run that ends the window runs on through the text's run after it (tailRun) as
	// far as q[pos:]'s run of k goes, without a comparison unless both runs are as long (every
	// position of a gap would compare the same stretch): pg_tail_run.
	u32 on = 0;
	bool onKnown = false;
	if (run && s + d == p.n && p.tail > 0) {
		u32 qr = qrun[item.w], k = qr & ~MT_RUN_CUT;
		if (!(qr & MT_RUN_CUT)) onKnown = pg_tail_run(p, k - d, on);
	}
	u32 ok = 0;
	uint4 out = make_uint4(0, 0, 0, 0);
	if (s < p.owned && !(s == 0 && !pg_left_maximal(p, s, q, pos))) {
		u64 g = p.start + s;
		ok = 1;
		if (!onKnown) on = pg_run_on(p, s, d, q, pc, cutHit, pos);
		out = make_uint4((u32)g, d + on, item.w, (u32)(g >> 32));
	}
	cand[r] = out;
	valid[r] = ok;
}

// compact_valid: out[offs[i]] = cand[i] for the valid candidates.
extern "C" __global__ void __launch_bounds__(256) compact_valid(const u32 *__restrict__ valid, const u32 *__restrict__ offs,
                                                                const uint4 *__restrict__ cand, u32 n, uint4 *__restrict__ out) {
	u32 i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n && valid[i]) out[offs[i]] = cand[i];
}

// The card's sort of a chunk's -maxmatch records into (slot, text position) order: mm_sort_keys
// makes each record's key, slot << tb | text position, and keeps its length beside it; a radix
// sort of the keys (radix_pass) follows, and mm_sort_recs makes the records again from the sorted
// keys and lengths (tb < 64).
extern "C" __global__ void __launch_bounds__(256) mm_sort_keys(const uint4 *__restrict__ recs, u32 n, u32 tb, u64 *__restrict__ keys,
                                                               u32 *__restrict__ lens) {
	u32 i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) {
		uint4 r = recs[i];
		keys[i] = (u64)r.z << tb | ((u64)r.w << 32 | r.x);
		lens[i] = r.y;
	}
}

extern "C" __global__ void __launch_bounds__(256) mm_sort_recs(const u64 *__restrict__ keys, const u32 *__restrict__ lens, u32 n, u32 tb,
                                                               uint4 *__restrict__ recs) {
	u32 i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) {
		u64 k = keys[i];
		u64 pos = k & ((1ull << tb) - 1);
		recs[i] = make_uint4((u32)pos, lens[i], (u32)(k >> tb), (u32)(pos >> 32));
	}
}

// ---- -maxmatch lines written on the card ------------------------------------------------------------
//
// A launch's records, sorted by (slot, text position), become MUMmer's match lines
// (formats.MummerWriter.AppendMatch, byte for byte; kernels.Lines): mm_line_len gives each line's
// length, a scan their offsets, mm_print writes them after the heads of their segment and those
// before it, and mm_seg_text_ends writes each segment's head and where its text ends. A record's segment is the last whose first slot is at most the record's (empty
// segments share the next one's first slot, and come before it); its reference record the last
// whose start is at most the text position.

struct SegLine {
	u32 slot0, n;   // the segment's slots [slot0, slot0+n)
	u32 qbase;      // the printed query position of slot0
	int step;       // +1, or -1 for a reverse strand's positions counted from the sequence's end
	u32 hoff, hlen; // its head: heads[hoff, hoff+hlen), written before its lines
};

// pl_decimal_digits: the digits of v in decimal (1 for 0).
__device__ __forceinline__ u32 pl_decimal_digits(u64 v) {
	u32 d = 1;
	while (v >= 10) {
		v /= 10;
		d++;
	}
	return d;
}

// pl_field_width: the width of "%8d" for v >= 0.
__device__ __forceinline__ u32 pl_field_width(u64 v) { return max(8u, pl_decimal_digits(v)); }

// PlLine is what a record's line needs: its reference record, the position within it
// (1-based), the printed query position and length, and the heads before it in the text.
struct PlLine {
	u32 rec, heads;
	u64 refPos, q, len;
};

// pl_line: record r's line.
__device__ __forceinline__ PlLine pl_line(uint4 r, const SegLine *__restrict__ segs, u32 nSegs, const u64 *__restrict__ starts, u32 nRec) {
	PlLine l;
	u64 pos = (u64)r.w << 32 | r.x;
	u32 lo = 0, hi = nRec; // the last start <= pos: starts[0] is 0
	while (hi - lo > 1) {
		u32 mid = (lo + hi) / 2;
		if (starts[mid] <= pos) lo = mid;
		else hi = mid;
	}
	l.rec = lo;
	l.refPos = pos - starts[lo] + 1;
	lo = 0, hi = nSegs;
	while (hi - lo > 1) {
		u32 mid = (lo + hi) / 2;
		if (segs[mid].slot0 <= r.z) lo = mid;
		else hi = mid;
	}
	SegLine sg = segs[lo];
	l.q = (u64)((long long)sg.qbase + (long long)sg.step * (long long)(r.z - sg.slot0));
	l.heads = sg.hoff + sg.hlen;
	l.len = r.y;
	return l;
}

extern "C" __global__ void __launch_bounds__(256) mm_line_len(const uint4 *__restrict__ recs, u32 n, const SegLine *__restrict__ segs, u32 nSegs,
                                                              const u64 *__restrict__ starts, u32 nRec, u32 prefixW, u32 *__restrict__ lens) {
	u32 i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n) return;
	PlLine l = pl_line(recs[i], segs, nSegs, starts, nRec);
	lens[i] = prefixW + pl_field_width(l.refPos) + 2 + pl_field_width(l.q) + 2 + pl_field_width(l.len) + 1;
}

// pl_field: writes v as "%8d" at out, returning the byte after it.
__device__ __forceinline__ u8 *pl_field(u8 *out, u64 v) {
	u32 d = pl_decimal_digits(v), w = max(8u, d);
	for (u32 k = d; k < w; k++) *out++ = ' ';
	for (u32 k = d; k > 0; k--) {
		out[k - 1] = (u8)('0' + v % 10);
		v /= 10;
	}
	return out + d;
}

extern "C" __global__ void __launch_bounds__(256) mm_print(const uint4 *__restrict__ recs, u32 n, const SegLine *__restrict__ segs, u32 nSegs,
                                                           const u64 *__restrict__ starts, u32 nRec, const u8 *__restrict__ prefix, u32 prefixW,
                                                           const u32 *__restrict__ offs, u8 *__restrict__ text) {
	u32 i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n) return;
	PlLine l = pl_line(recs[i], segs, nSegs, starts, nRec);
	u8 *out = text + offs[i] + l.heads;
	const u8 *pre = prefix + (u64)l.rec * prefixW;
	for (u32 k = 0; k < prefixW; k++) *out++ = pre[k];
	out = pl_field(out, l.refPos);
	*out++ = ' ';
	*out++ = ' ';
	out = pl_field(out, l.q);
	*out++ = ' ';
	*out++ = ' ';
	out = pl_field(out, l.len);
	*out = '\n';
}

// pl_lines_before: the lines' bytes before the first record whose slot is slot or more (total
// where there is none).
__device__ __forceinline__ u32 pl_lines_before(const uint4 *__restrict__ recs, u32 n, const u32 *__restrict__ offs, u32 total, u32 slot) {
	u32 lo = 0, hi = n;
	while (lo < hi) {
		u32 mid = (lo + hi) / 2;
		if (recs[mid].z < slot) lo = mid + 1;
		else hi = mid;
	}
	return lo < n ? offs[lo] : total;
}

// mm_seg_text_ends writes segment s's head before its lines, and ends[s], where its text ends.
// total is the lines' bytes.
extern "C" __global__ void __launch_bounds__(256) mm_seg_text_ends(const uint4 *__restrict__ recs, u32 n, const SegLine *__restrict__ segs,
                                                                   u32 nSegs, const u32 *__restrict__ offs, u32 total, const u8 *__restrict__ heads,
                                                                   u8 *__restrict__ text, u32 *__restrict__ ends) {
	u32 s = blockIdx.x * blockDim.x + threadIdx.x;
	if (s >= nSegs) return;
	SegLine sg = segs[s];
	u8 *out = text + pl_lines_before(recs, n, offs, total, sg.slot0) + sg.hoff;
	for (u32 k = 0; k < sg.hlen; k++) out[k] = heads[sg.hoff + k];
	ends[s] = pl_lines_before(recs, n, offs, total, sg.slot0 + sg.n) + sg.hoff + sg.hlen;
}

// ---- -mumreference and -mum ---------------------------------------------------------------------

struct Cand {
	u32 len, count;
	u64 ref;
};

#define MT_NO_ROW 0xffffffffu

// TailWalk is what pg_best keeps from one position of a walk to the next (kernels/cpu's
// tailWalk): the run of one code at a position, and the last two comparisons with the text after
// the window, by query position (plus one; 0: none).
struct TailWalk {
	u32 runPos, run; // run 0: none yet
	u32 at0, n0, at1, n1, next;
};

// pg_run_at: how many times q[pos] repeats from pos on, in the codes on the device (tailWalk.runAt).
__device__ __forceinline__ u32 pg_run_at(const u8 *q, const Piece &pc, u32 pos, TailWalk &tw) {
	if (tw.run != 0 && tw.runPos == pos) return tw.run;
	if (tw.run != 0 && tw.runPos == pos + 1) {
		tw.run = q[pos] == q[pos + 1] ? tw.run + 1 : 1;
	} else {
		tw.run = mt_run(q, pos, pc.len);
	}
	tw.runPos = pos;
	return tw.run;
}

// pg_tail_match: how far q[at:] matches the text after the window (pg_tail_same), at >= pos, the
// walk's position (tailWalk.tailMatch): where q[at] is in q[pos:]'s first run and the text after
// the window begins with a run of that symbol, the shorter run unless both are as long; otherwise
// compared, and remembered for the last two query positions asked about.
__device__ __forceinline__ u32 pg_tail_match(const PageDev &p, const u8 *q, const Piece &pc, u32 *cutHit, u32 pos, u32 at, TailWalk &tw) {
	u32 e = p.tailRun;
	if (e > 0 && at < pc.len && q[at] == q[pos] && q[at] == p.text[p.start + p.n]) {
		u32 k = pg_run_at(q, pc, pos, tw), n;
		if (at < pos + k && pg_tail_run(p, pos + k - at, n)) {
			// Where the run ends the codes on the device, the comparison would have reached them.
			if (n < e && pos + k == pc.len && pc.cut) *cutHit = 1;
			return n;
		}
	}
	if (tw.at0 == at + 1) return tw.n0;
	if (tw.at1 == at + 1) return tw.n1;
	u32 n = pg_tail_same(p, q, pc, cutHit, at);
	if (tw.next) {
		tw.at1 = at + 1;
		tw.n1 = n;
	} else {
		tw.at0 = at + 1;
		tw.n0 = n;
	}
	tw.next ^= 1;
	return n;
}

// pg_take: pg_best's rules (its consider's, and pg_run_best's) for a match of length full, run on
// from the one of length d at window position s that reaches the window's end. The text position
// is formed only where it is kept (formed before the comparisons, it cost mu_walk spills).
__device__ __forceinline__ void pg_take(const PageDev &p, Cand &c, u32 d, u32 full, u32 s) {
	if (full > c.len) {
		c.len = full;
		c.count = 1;
		c.ref = p.start + s;
	} else if (full == c.len && full > d) {
		c.count++;
	}
}

// pg_run_best: what pg_best's climb finds from an interval of depth d on, where q[pos:] begins
// with a run of k >= d codes (Page.runBest, which says how).
__device__ __forceinline__ void pg_run_best(const PageDev &p, const u8 *q, const Piece &pc, u32 *cutHit, u32 pos, u32 d, u32 k, u32 lb,
                                            TailWalk &tw, Cand &c) {
	if (p.endRun == 0 || p.text[p.start + p.n - 1] != q[pos]) return;
	u32 e = p.tailRun, top = min(d, p.endRun);
	if (top < lb) return;
	// A run that reaches the end of a cut piece's codes may go on: a match that runs on to it
	// would be compared up to there (pg_tail_same), and so sets *cutHit.
	if (pc.cut && pos + k == pc.len && k - top <= e && k - top < p.tail) *cutHit = 1;
	// j in [k-e+1, top]: each runs on to k.
	u32 low = max(lb, k + 1 > e ? k + 1 - e : 0u);
	if (low <= top) {
		pg_take(p, c, top, k, p.n - top);
		if (c.len == k) c.count += min(top - low, 2u); // the rest, each shorter than k
	}
	if (k >= e && k - e >= lb && k - e <= top) {
		u32 j = k - e;
		pg_take(p, c, j, j + pg_tail_match(p, q, pc, cutHit, pos, pos + j, tw), p.n - j);
	}
	if (k >= e + 1) {
		u32 j = min(top, k - e - 1);
		if (j >= lb) pg_take(p, c, j, j + e, p.n - j); // the longest of those that stop at e
	}
}

// pg_best: the longest match at one query position over the text positions this page owns, and
// how many owned positions reach that length (Page.pageBest). sLo is the suffix array's value at
// lo, read by the caller, when hi - lo is at most the overlap plus one (MT_NO_ROW otherwise).
__device__ __forceinline__ Cand pg_best(const PageDev &p, const u8 *q, const Piece &pc, u32 *cutHit, u32 pos, u32 lo, u32 hi, u32 m, u32 minLen,
                                        u32 sLo, TailWalk &tw) {
	Cand c = {0, 0, 0};
	u32 owned = p.owned;
	if (hi - lo > p.n - owned + 1) {
		c.len = m;
		c.count = 2;
	} else {
		for (u32 k = lo; k < hi && c.count < 2; k++) { // 2 stands for several, as above
			u32 s = k == lo ? sLo : (u32)__ldg(p.sa + k);
			if (s < owned) {
				c.count++;
				c.ref = p.start + s;
			}
		}
		if (c.count > 0) c.len = m;
	}
	if (p.tail == 0) return c;
	auto consider = [&](u32 s, u32 d) {
		if (s != p.n - d || s >= owned) return;
		pg_take(p, c, d, d + pg_tail_match(p, q, pc, cutHit, pos, pos + d, tw), s);
	};
	if (c.count > 0) consider(sLo != MT_NO_ROW ? sLo : (u32)__ldg(p.sa + lo), m);
	// The enclosing intervals are shallower than m: while the overlap holds m-1 symbols none
	// reaches the window's end from an owned position (Page.pageBest), and no LCP is read.
	if (m - 1 <= p.n - owned) return c;
	u32 lb = max(minLen, p.n - owned + 1); // the shallowest depth of a suffix from an owned position
	u32 a = lo, b = hi, k = 0;
	for (;;) {
		int d = max(pg_lcp(p, a), pg_lcp(p, b));
		if (d < (int)lb) break;
		if (k == 0) k = pg_run_at(q, pc, pos, tw);
		if ((u32)d <= k) {
			// q[pos:pos+d] is one symbol repeated, as is every enclosing interval's prefix
			// (a run of N against a gap): what the climb would find is worked out at once.
			pg_run_best(p, q, pc, cutHit, pos, (u32)d, k, lb, tw, c);
			break;
		}
		a = pg_prev_smaller(p, a, d);
		b = pg_next_smaller(p, b, d);
		consider((u32)__ldg(p.sa + a), (u32)d);
	}
	return c;
}

// mu_walk: a thread per piece; at each position the page's best match is merged into the best over
// the pages so far (best[slot]: length, count, text position; not read on the first page). After
// the last page the unique, left-maximal ones are written as records (text position, length,
// slot) at the end of the piece's slots, in ascending slot order, and counts[t] says how many.
extern "C" __global__ void __launch_bounds__(128) mu_walk(const PageDev p, const u8 *__restrict__ codes, const Piece *__restrict__ pieces,
                                                          u32 nPieces, const uint4 *__restrict__ starts, const uint2 *__restrict__ ends,
                                                          const u32 *__restrict__ blockEnd, u32 minLen, uint4 *__restrict__ best, u32 first,
                                                          u32 last, uint4 *__restrict__ out, u32 *__restrict__ counts, u32 *cutHit) {
	u32 t = blockIdx.x * blockDim.x + threadIdx.x;
	if (t >= nPieces) return;
	Piece pc = pieces[t];
	const u8 *q = codes + pc.q;
	u32 end = pc.slot + (pc.to - pc.from);
	u32 w = end;
	if (pc.from < pc.to) {
		u32 lo, hi, m;
		pg_load_start(pieces, starts, ends, blockEnd, t, pc, lo, hi, m);
		int pos = (int)pc.to - 1;
		pg_extend(p, lo, hi, m, q[pos]);
		// sRow: the suffix array's value at lo while the match is one row and it has been read:
		// extending that row by the symbol before its suffix gives the suffix one position
		// left, so a unique match is followed along the text without reading the array again.
		u32 sRow = MT_NO_ROW;
		TailWalk tw = {0, 0, 0, 0, 0, 0, 0};
		for (;;) {
			u32 slot = pc.slot + ((u32)pos - pc.from);
			// What this position needs, requested before the ranks of the next step are
			// computed, so that the reads are under way together.
			bool longEnough = m >= minLen;
			u32 sLo = sRow;
			if (longEnough && sLo == MT_NO_ROW && hi - lo <= p.n - p.owned + 1) sLo = (u32)__ldg(p.sa + lo);
			uint4 v = make_uint4(0, 0, 0, 0);
			if (!first) v = best[slot];
			bool more = pos > (int)pc.from;
			u32 x = more ? q[pos - 1] : MT_CODE_NONE;
			u32 r1 = 0, r2 = 0;
			if (x >= MT_FIRST) pg_rank_pair(p, x, lo, hi, r1, r2);
			Cand b = {v.x, v.y, (u64)v.w << 32 | v.z};
			if (longEnough) {
				Cand c = pg_best(p, q, pc, cutHit, pos, lo, hi, m, minLen, sLo, tw);
				if (c.count == 0) {
				} else if (c.len > b.len) {
					b = c;
				} else if (c.len == b.len) {
					b.count += c.count;
				}
			}
			if (!last) {
				best[slot] = make_uint4(b.len, b.count, (u32)b.ref, (u32)(b.ref >> 32));
			} else if (b.len >= minLen && b.count == 1) {
				bool emit = true;
				if (pos > 0 && b.ref > 0) {
					u32 prev = q[pos - 1];
					emit = !(prev >= MT_FIRST && p.text[b.ref - 1] == prev);
				}
				if (emit) {
					w--;
					out[w] = make_uint4((u32)b.ref, b.len, slot, (u32)(b.ref >> 32));
				}
			}
			if (!more) break;
			sRow = hi - lo == 1 && r1 < r2 && sLo != MT_NO_ROW ? sLo - 1 : MT_NO_ROW;
			if (x >= MT_FIRST) {
				pg_extend_ranked(p, lo, hi, m, x, r1, r2);
			} else {
				lo = 0;
				hi = p.n + 1;
				m = 0;
			}
			pos--;
		}
	}
	if (last) counts[t] = end - w;
}

// lcp_probe: the searches for the next smaller LCP alone, for the tests: prev[i] and next[i] are
// pg_prev_smaller and pg_next_smaller of row ks[i] and depth ds[i].
extern "C" __global__ void __launch_bounds__(128) lcp_probe(const PageDev p, const u32 *__restrict__ ks, const int *__restrict__ ds, u32 n,
                                                            u32 *__restrict__ prev, u32 *__restrict__ next) {
	u32 i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n) return;
	prev[i] = pg_prev_smaller(p, ks[i], ds[i]);
	next[i] = pg_next_smaller(p, ks[i], ds[i]);
}

#include "page_build.cuh"
