package cpu

import (
	"runtime"
	"sync/atomic"
	"time"
)

// team runs the tasks of a step (f(0) ... f(n-1)) on the calling goroutine and helper goroutines:
// each thread claims tasks one at a time, so a helper that starts late (a busy machine) just
// takes fewer of them, and the caller waits at most for the tasks a running helper has in hand
// (spinning briefly, then blocking, so that a helper sharing its core gets to run). Between steps
// helpers spin for a while (the time a step of the scans takes), then park. A step's tasks may
// depend on nothing but the steps before it.
type team struct {
	size    int // threads, the caller included
	helpers []*teamHelper

	// The current step, immutable once published. claim is epoch<<32 | tasks<<16 | claimed:
	// a new epoch publishes a step, and claiming a task is one compare-and-swap. done is
	// epoch<<32 | tasks finished.
	step  atomic.Pointer[teamStep]
	claim atomic.Uint64
	done  atomic.Uint64
	epoch uint64

	// The caller blocked waiting for a helper's task: waiting is set, and a helper that
	// finishes a task clears it and sends on finished.
	waiting  atomic.Bool
	finished chan struct{}

	unhelped int // steps in a row the helpers took no task of
	slow     int // slowScore for each step a helper kept the caller waiting, less one for each other
	solo     int // the scans' blocks left to run without them (alone)
	backoff  int // times in a row the caller went alone
}

type teamStep struct {
	f     func(int)
	epoch uint64
}

const (
	spinBudget = 1 << 18 // loads a helper spins through waiting for a step before parking
	awaitSpin  = 1 << 16 // loads the caller spins through waiting for a task before blocking
	soloAfter  = 16      // steps in a row without help before the caller goes it alone...
	soloSteps  = 32      // ...for this many of the scans' blocks, doubled up to maxBackoff times in a row
	maxBackoff = 7
	slowScore  = 4         // a step that kept the caller waiting counts as many steps that did not...
	slowAfter  = 3         // ...and the caller goes alone when that reaches this many slow steps' worth
	yieldEvery = 1<<10 - 1 // spinning yields the core every 1024 loads

	// The longest the caller waits for helpers to finish a step (after its own tasks, and
	// longer than those took) before it takes them for stopped by the system.
	slowWait = 200 * time.Microsecond
)

func newTeam(threads int) *team {
	threads = max(1, min(threads, runtime.GOMAXPROCS(0), maxThreads))
	tm := &team{size: threads, finished: make(chan struct{}, 1)}
	for range threads - 1 {
		h := &teamHelper{tm: tm, wake: make(chan struct{}, 1)}
		tm.helpers = append(tm.helpers, h)
		go h.loop()
	}
	return tm
}

// close ends the helpers.
func (tm *team) close() {
	for _, h := range tm.helpers {
		h.closed.Store(true)
		if h.parked.CompareAndSwap(true, false) {
			h.wake <- struct{}{}
		}
	}
}

// run calls f(0), ..., f(n-1) (n < 1<<16), each once, and returns when all have returned.
func (tm *team) run(n int, f func(int)) {
	if n == 1 || len(tm.helpers) == 0 {
		for j := range n {
			f(j)
		}
		return
	}
	saTeamStep(false)
	tm.epoch++
	e := tm.epoch
	tm.step.Store(&teamStep{f, e})
	tm.done.Store(e << 32)
	tm.claim.Store(e<<32 | uint64(n)<<16)
	for _, h := range tm.helpers {
		if h.parked.CompareAndSwap(true, false) {
			h.wake <- struct{}{}
		}
	}
	t0 := time.Now()
	mine := 0
	for {
		j, ok := tm.claimTask(e)
		if !ok {
			break
		}
		f(j)
		tm.done.Add(1)
		mine++
	}
	t1 := time.Now()
	tm.await(e<<32 | uint64(n))
	wait := time.Since(t1)
	// Helpers that get no tasks, or that did fewer than the caller and kept it waiting longer
	// than it worked, again and again, are not being run as they should (the machine is busy,
	// and a helper may share the caller's core, where its spinning takes the caller's time): go
	// alone for a while, longer each time in a row. One slow step is not enough: a helper woken
	// late, or handed the larger of two uneven tasks, keeps the caller waiting now and then on
	// an idle machine too (on the 2-core VM, 35 times in one construction of 100 MiB, each of
	// which sent a scan solo). One helper stopped by the system while the others did their share
	// (many threads) delays that step only: going alone would idle the others.
	switch {
	case mine == n:
		if tm.unhelped++; tm.unhelped >= soloAfter {
			tm.unhelped, tm.slow = 0, 0
			tm.goSolo()
		}
	case wait > slowWait && wait > t1.Sub(t0) && 2*mine >= n:
		tm.unhelped = 0
		if tm.slow += slowScore; tm.slow >= slowAfter*slowScore {
			tm.slow = 0
			tm.goSolo()
		}
	default:
		tm.unhelped = 0
		tm.slow = max(tm.slow-1, 0)
		if tm.slow == 0 {
			tm.backoff = 0
		}
	}
}

// alone reports whether the next block of a scan should run on the caller alone (no helpers, or
// going solo for now), counting it as a step of the spell; a caller that hears yes does the
// block's work its own way. Only the scans' blocks go solo: a spell is counted in them, and
// whole passes and doubling's rounds (run without alone) always share out. Those are few and
// long, where a helper's start costs nothing; counted in the spell, a spell begun in a scan's
// small blocks ran the Linux tar's second reduced level, all 22 of its steps, on one thread
// (825 ms against 400-445 ms shared, two threads).
func (tm *team) alone() bool {
	if len(tm.helpers) == 0 {
		return true
	}
	if tm.solo > 0 {
		tm.solo--
	}
	if tm.solo > 0 {
		saTeamStep(true)
	}
	return tm.solo > 0
}

// neverSolo keeps teams from going solo (a variable for the tests: with alwaysParts, every block
// of enough entries runs in parts even where the helpers get no core).
var neverSolo = false

// goSolo has the caller run the next steps alone, twice as many as the last time in a row.
func (tm *team) goSolo() {
	saTeamSolo()
	if neverSolo {
		return
	}
	tm.solo = soloSteps << tm.backoff
	tm.backoff = min(tm.backoff+1, maxBackoff)
}

// await waits until done reads all: spinning a while, then blocking, so that a helper the system
// runs on this thread's core gets to finish.
func (tm *team) await(all uint64) {
	for spins := 0; tm.done.Load() != all; spins++ {
		if spins < awaitSpin {
			if spins&yieldEvery == yieldEvery {
				osYield()
			}
			continue
		}
		tm.waiting.Store(true)
		if tm.done.Load() != all {
			<-tm.finished
		} else if !tm.waiting.CompareAndSwap(true, false) {
			<-tm.finished // a helper saw us waiting: take its token
		}
		spins = 0
	}
}

// claimTask claims the next unclaimed task of the step of epoch e, if there is one.
func (tm *team) claimTask(e uint64) (int, bool) {
	for {
		s := tm.claim.Load()
		j, n := int(s&0xffff), int(s>>16&0xffff)
		if s>>32 != e || j >= n {
			return 0, false
		}
		if tm.claim.CompareAndSwap(s, s+1) {
			return j, true
		}
	}
}

type teamHelper struct {
	tm     *team
	wake   chan struct{}
	parked atomic.Bool
	closed atomic.Bool
}

func (h *teamHelper) loop() {
	tm := h.tm
	seen := uint64(0)
	for {
		// Wait for a new step.
		for spins := 0; ; spins++ {
			if e := tm.claim.Load() >> 32; e != seen {
				break
			}
			if h.closed.Load() {
				return
			}
			if spins < spinBudget {
				if spins&yieldEvery == yieldEvery {
					osYield()
				}
				continue
			}
			spins = 0
			h.parked.Store(true)
			if tm.claim.Load()>>32 == seen && !h.closed.Load() {
				<-h.wake // the publisher clears parked and sends
			} else if !h.parked.CompareAndSwap(true, false) {
				<-h.wake // the publisher saw parked first: take its token
			}
		}
		// The step was stored before its epoch was published; the caller does not move on
		// until every task it has is done, ours included.
		st := tm.step.Load()
		seen = st.epoch
		for {
			j, ok := tm.claimTask(seen)
			if !ok {
				break
			}
			st.f(j)
			tm.done.Add(1)
			if tm.waiting.CompareAndSwap(true, false) {
				tm.finished <- struct{}{}
			}
		}
	}
}

// parts is the number of parts to cut n entries of a pass into: one per thread when there are
// many.
func (tm *team) parts(n int) int {
	if n < partsFrom {
		return 1
	}
	return min(tm.size, maxThreads)
}

// clear clears s, a part per thread when it is large; with fresh (the suffix array at the top
// level), by zeroPages.
func (tm *team) clear(s []int32, fresh bool) {
	parts := tm.parts(len(s))
	tm.run(parts, func(j int) {
		part := s[len(s)*j/parts : len(s)*(j+1)/parts]
		if fresh {
			zeroPages(part)
		} else {
			clear(part)
		}
	})
}
