package cpu

import (
	"testing"
	"time"
)

// TestTeamSharesOutWhileSolo: a team in a solo spell still runs whole steps on its threads (only
// the scans' blocks go solo, alone): the step's first task waits for its second, which only
// another thread can run then.
func TestTeamSharesOutWhileSolo(t *testing.T) {
	tm := newTeam(2)
	defer tm.close()
	if tm.size < 2 {
		t.Skip("one thread")
	}
	tm.solo = 1 << 20
	started := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		tm.run(2, func(j int) {
			if j == 0 {
				<-started
			} else {
				close(started)
			}
		})
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the step ran on one thread during a solo spell")
	}
	if !tm.alone() {
		t.Error("the spell no longer holds for the scans' blocks")
	}
}
