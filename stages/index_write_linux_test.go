package stages

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/sapipe/sapipe/kernels/cpu"
)

// TestWriteMappedWriteOnly: an index written into a file opened for writing alone (a shell's
// stdout) still goes through a mapping, of the file opened again, with the bytes of an index
// written in order.
func TestWriteMappedWriteOnly(t *testing.T) {
	defer func(m int64) { mappedWriteMin = m }(mappedWriteMin)
	mappedWriteMin = 0
	rng := rand.New(rand.NewPCG(2, 7))
	dir := t.TempDir()
	fa, _ := randomFasta(rng, 2, 5000)
	built, err := BuildIndex(cpu.New(2), writeTemp(t, dir, "ref.fa", fa), false, nil, IndexOptions{Overlap: DefaultIndexOverlap, Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	if err := built.Write(&want, "", 2); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "out.sai")
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if err := built.Write(f, "", 2); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if got, _ := os.ReadFile(path); !bytes.Equal(got, want.Bytes()) {
		t.Fatal("the index written into a write-only file differs")
	}
	g, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if _, rw, ok := readWriteFile(g); !ok || rw == nil {
		t.Fatal("a write-only file was not opened again for reading and writing")
	} else {
		rw.Close()
	}
}
