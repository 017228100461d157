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

	// Blocks of the scans by how they ran (saBlock), and the team's steps since the last
	// phase: run on its threads, run by the caller alone while solo, and times it went solo.
	saBlocks                      [4]struct{ blocks, entries int64 }
	saSteps, saSoloSteps, saSolos int64
)

// SAPHASE_NEVERSOLO=1 keeps the teams from going solo, SAPHASE_PARTS=1 has every block of
// enough entries go in parts (not by its clock), to compare.
func init() {
	if os.Getenv("SAPHASE_NEVERSOLO") != "" {
		neverSolo = true
	}
	if os.Getenv("SAPHASE_PARTS") != "" {
		alwaysParts = true
	}
}

func saBlock(how int, n int32) {
	saBlocks[how].blocks++
	saBlocks[how].entries += int64(n)
}

func saTeamStep(solo bool) {
	if solo {
		saSoloSteps++
	} else {
		saSteps++
	}
}

func saTeamSolo() { saSolos++ }

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
		if b := saBlocks; b[0].blocks+b[1].blocks+b[2].blocks+b[3].blocks > 0 {
			fmt.Fprintf(os.Stderr, "%*s  blocks: %d in parts (%.2f M entries), %d serial by their clock (%.2f M), %d short (%.2f M), %d solo (%.2f M)\n",
				2*saPhaseNest, "", b[0].blocks, float64(b[0].entries)/1e6, b[3].blocks, float64(b[3].entries)/1e6,
				b[1].blocks, float64(b[1].entries)/1e6, b[2].blocks, float64(b[2].entries)/1e6)
		}
		if saSteps+saSoloSteps > 0 {
			fmt.Fprintf(os.Stderr, "%*s  team steps: %d on its threads, %d solo; went solo %d times\n",
				2*saPhaseNest, "", saSteps, saSoloSteps, saSolos)
		}
	}
	saBlocks = [4]struct{ blocks, entries int64 }{}
	saSteps, saSoloSteps, saSolos = 0, 0, 0
	saPhaseT, saPhaseW = now, w
}

func saPhaseDepth(d int) { saPhaseNest += d }

func saPhaseLevel(n, m, names int) {
	fmt.Fprintf(os.Stderr, "%*slevel n=%d m=%d names=%d\n", 2*saPhaseNest, "", n, m, names)
}
