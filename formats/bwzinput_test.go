package formats

import (
	"bytes"
	"io"
	"testing"

	"github.com/sapipe/sapipe/formats/bwz"
)

// TestBWZUnregistered: a .bwz input is told by its magic; where package stages has not registered
// its pipeline (this package's own tests), reading or writing one is refused in one line that
// names the file. stages' tests read and write them for real.
func TestBWZUnregistered(t *testing.T) {
	if bwzDecoder != nil || bwzEncoder != nil {
		t.Fatal("registered without package stages")
	}
	stream := bwz.AppendTrailer(bwz.AppendHeader(nil, 1<<20), bwz.Trailer{})
	if k := compression(stream[:10]); k != "bwz" {
		t.Fatalf("compression: %q", k)
	}
	if k := compression([]byte("\xB7BWY")); k != "" {
		t.Fatalf("compression of another magic: %q", k)
	}
	const want = "x.fq.bwz: bwz: not supported by this program"
	if _, err := NewReader("x.fq.bwz", bytes.NewReader(stream)); err == nil || err.Error() != want {
		t.Errorf("NewReader: %v", err)
	}
	if _, err := NewPatternReader("x.fq.bwz", bytes.NewReader(stream)); err == nil || err.Error() != want {
		t.Errorf("NewPatternReader: %v", err)
	}
	if _, err := NewCompressor(io.Discard, "bwz"); err == nil {
		t.Error("NewCompressor: no error")
	}
}
