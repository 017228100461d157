//go:build saphase

package cpu

// Timings of the SA-IS phases on stderr, for development: go test -tags saphase, or build
// tools/sabench with -tags saphase. Wall time, and CPU time of the process (steadier on a shared
// machine, but it counts every thread).

import (
	"fmt"
	"os"
	"syscall"
	"time"
)

var (
	saPhaseT    time.Duration
	saPhaseW    time.Time
	saPhaseNest int
)

func saPhaseCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func saPhase(name string) {
	now, w := saPhaseCPU(), time.Now()
	if name != "start" {
		fmt.Fprintf(os.Stderr, "%*s%-14s %7.1f ms wall %7.1f ms cpu\n", 2*saPhaseNest, "", name,
			float64(w.Sub(saPhaseW).Microseconds())/1000, float64((now-saPhaseT).Microseconds())/1000)
	}
	saPhaseT, saPhaseW = now, w
}

func saPhaseDepth(d int) { saPhaseNest += d }

func saPhaseLevel(n, m, names int) {
	fmt.Fprintf(os.Stderr, "%*slevel n=%d m=%d names=%d\n", 2*saPhaseNest, "", n, m, names)
}
