package stages

import (
	"fmt"
	"io"
	"sync"
	"time"
)

// Progress prints a one-line counter with rate to a terminal. A nil *Progress prints nothing, so
// callers need not check whether progress is wanted.
type Progress struct {
	W     io.Writer
	Label string
	mu    sync.Mutex
	last  time.Time
	shown bool
}

// Update redraws the counter at most a few times a second.
func (p *Progress) Update(records, bases int64, elapsed time.Duration) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if now := time.Now(); now.Sub(p.last) >= 250*time.Millisecond {
		p.last = now
		p.draw(records, bases, elapsed)
	}
}

// Done draws the final counter and ends the line.
func (p *Progress) Done(records, bases int64, elapsed time.Duration) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.shown {
		p.draw(records, bases, elapsed)
		fmt.Fprintln(p.W)
	}
}

func (p *Progress) draw(records, bases int64, elapsed time.Duration) {
	p.shown = true
	rate := float64(bases) / max(elapsed.Seconds(), 1e-9) / 1e6
	fmt.Fprintf(p.W, "\r%s: %d records, %.1f Mbp, %.1f Mbp/s ", p.Label, records, float64(bases)/1e6, rate)
}
