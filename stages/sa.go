package stages

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/sapipe/sapipe/kernels"
)

// SAFormat is how `sapipe sa` writes a suffix array.
type SAFormat int

const (
	// SAU32 writes each position as a 4-byte little-endian unsigned integer.
	SAU32 SAFormat = iota
	// SAU64 writes each position as an 8-byte little-endian unsigned integer.
	SAU64
	// SAText writes each position in decimal on a line of its own.
	SAText
)

// ParseSAFormat returns the format named u32, u64 or text.
func ParseSAFormat(s string) (SAFormat, error) {
	switch s {
	case "u32":
		return SAU32, nil
	case "u64":
		return SAU64, nil
	case "text":
		return SAText, nil
	}
	return 0, fmt.Errorf("--format %s: want u32, u64 or text", s)
}

// MaxSAText is the longest text whose suffix array sapipe builds: backends index with int32.
const MaxSAText = 1<<31 - 1

// ReadText reads all of r, the input named name, refusing inputs longer than limit bytes before
// it holds more than limit+1 of them.
func ReadText(name string, r io.Reader, limit int) ([]byte, error) {
	size := 64 << 10
	if f, ok := r.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
			if st.Size() > int64(limit) {
				return nil, fmt.Errorf("%s: input longer than %d bytes", name, limit)
			}
			size = int(st.Size() + 1)
		}
	}
	buf := make([]byte, 0, max(size, 512))
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		room := buf[len(buf):min(cap(buf), limit+1)]
		n, err := r.Read(room)
		buf = buf[:len(buf)+n]
		if len(buf) > limit {
			return nil, fmt.Errorf("%s: input longer than %d bytes", name, limit)
		}
		if errors.Is(err, io.EOF) {
			return buf, nil
		}
		if err != nil {
			return nil, readError(name, err)
		}
	}
}

// readError names the input in a read error, once.
func readError(name string, err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return fmt.Errorf("reading %s: %w", name, err)
}

// BuildSuffixArray returns the suffix array of text, built by b.
func BuildSuffixArray(b kernels.Backend, text []byte) ([]int32, error) {
	if len(text) > MaxSAText {
		return nil, fmt.Errorf("input of %d bytes: suffix arrays are limited to %d bytes", len(text), MaxSAText)
	}
	sa := make([]int32, len(text))
	if err := b.SuffixArray(text, sa); err != nil {
		return nil, fmt.Errorf("suffix array on %s: %w", b.Name(), err)
	}
	return sa, nil
}

// WriteSuffixArray writes sa to w in format f.
func WriteSuffixArray(w io.Writer, sa []int32, f SAFormat) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	buf := make([]byte, 0, 1<<16)
	flush := func() error {
		_, err := bw.Write(buf)
		buf = buf[:0]
		return err
	}
	for _, p := range sa {
		switch f {
		case SAU32:
			buf = binary.LittleEndian.AppendUint32(buf, uint32(p))
		case SAU64:
			buf = binary.LittleEndian.AppendUint64(buf, uint64(p))
		default:
			buf = strconv.AppendInt(buf, int64(p), 10)
			buf = append(buf, '\n')
		}
		if len(buf) > cap(buf)-24 {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	if err := flush(); err != nil {
		return err
	}
	return bw.Flush()
}
