package stages

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sapipe/sapipe/formats"
)

// TestCutBlockFault: a mapped block's chunk read after its file was cut short (by the parser or
// the formatting, in work) ends with an error naming the file, not a crash.
func TestCutBlockFault(t *testing.T) {
	path := filepath.Join(t.TempDir(), "in.fq")
	var in strings.Builder
	for i := range 4000 {
		fmt.Fprintf(&in, "@r%d\n%s\n+\n%s\n", i, strings.Repeat("ACGT", 20), strings.Repeat("F", 80))
	}
	if err := os.WriteFile(path, []byte(in.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	bf, err := formats.OpenBlocks(path, 1<<14)
	if err != nil || bf == nil {
		t.Fatalf("OpenBlocks: %v, %v", bf, err)
	}
	defer bf.Close()
	if !bf.Mapped() {
		t.Skip("no mapping on this system")
	}
	k := blockChunk{blk: bf, blkIdx: bf.Blocks() - 2}
	var c formats.Chunk
	read := 0
	err = k.cutBlock(&c, func() error {
		if len(c.Data) == 0 || c.Odd {
			t.Fatal("no chunk before the file is cut")
		}
		if err := os.Truncate(path, 0); err != nil {
			t.Fatal(err)
		}
		read = bytes.Count(c.Data, []byte{'\n'})
		return nil
	})
	if err == nil || !strings.Contains(err.Error(), path) {
		t.Fatalf("a chunk read after its file was cut short: error %v (%d newlines read)", err, read)
	}
}
