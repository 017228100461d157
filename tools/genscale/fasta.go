package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
)

// fastaWriter writes records with their sequence cut into lines of a fixed width, through a
// large buffer of its own so that the writes reaching the file are megabytes each.
type fastaWriter struct {
	w     io.Writer
	width int
	col   int // bases on the current line
	buf   []byte
	err   error
}

const writeBuffer = 8 << 20

func newFastaWriter(w io.Writer, width int) *fastaWriter {
	return &fastaWriter{w: w, width: width, buf: make([]byte, 0, writeBuffer+width+1)}
}

func (f *fastaWriter) flushIfFull() {
	if len(f.buf) >= writeBuffer {
		f.flush()
	}
}

func (f *fastaWriter) flush() {
	if f.err == nil && len(f.buf) > 0 {
		_, f.err = f.w.Write(f.buf)
	}
	f.buf = f.buf[:0]
}

// header starts a record, ending the previous one's last line.
func (f *fastaWriter) header(name string) {
	if f.col > 0 {
		f.buf = append(f.buf, '\n')
		f.col = 0
	}
	f.buf = append(f.buf, '>')
	f.buf = append(f.buf, name...)
	f.buf = append(f.buf, '\n')
	f.flushIfFull()
}

// seq appends bases to the current record.
func (f *fastaWriter) seq(s []byte) {
	for len(s) > 0 {
		n := min(f.width-f.col, len(s))
		f.buf = append(f.buf, s[:n]...)
		s = s[n:]
		f.col += n
		if f.col == f.width {
			f.buf = append(f.buf, '\n')
			f.col = 0
			f.flushIfFull()
		}
	}
	f.flushIfFull()
}

// close ends the last line and writes what is buffered.
func (f *fastaWriter) close() error {
	if f.col > 0 {
		f.buf = append(f.buf, '\n')
		f.col = 0
	}
	f.flush()
	return f.err
}

// fasta is a set of records held in memory: their names and their sequences one after the
// other in seq, record i at seq[start[i]:start[i+1]] (start has one more entry than names).
type fasta struct {
	names []string
	start []int
	seq   []byte
}

func (g *fasta) record(i int) []byte { return g.seq[g.start[i]:g.start[i+1]] }

// readFasta reads the FASTA file at path ("-" is stdin) into memory, keeping only letters
// (IUPAC codes, soft-masked lowercase) of the sequence lines. With limit > 0 it stops after
// limit bases, the last record cut short. Memory: the bases, and a 1 MiB buffer.
func readFasta(path string, limit int) (*fasta, error) {
	var in io.Reader = os.Stdin
	capacity := 1 << 20
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		if fi, err := f.Stat(); err == nil && fi.Size() > 0 {
			capacity = int(fi.Size())
		}
		in = f
	}
	if limit > 0 {
		capacity = min(capacity, limit)
	}
	g, err := parseFasta(in, capacity, limit)
	if err != nil {
		if path == "-" {
			path = "stdin"
		}
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return g, nil
}

// parseFasta reads records from r (see readFasta); capacity is a guess of the bases to come.
func parseFasta(r io.Reader, capacity, limit int) (*fasta, error) {
	br := bufio.NewReaderSize(r, 1<<20)
	g := &fasta{seq: make([]byte, 0, capacity)}
	hugePages(g.seq)
	line, partial := 0, false
	for {
		if limit > 0 && len(g.seq) >= limit {
			break
		}
		b, err := br.ReadSlice('\n')
		if len(b) > 0 {
			if !partial {
				line++
			}
			startOfLine := !partial
			partial = b[len(b)-1] != '\n'
			if startOfLine && b[0] == '>' {
				if partial {
					return nil, fmt.Errorf("line %d: header longer than 1 MiB", line)
				}
				name := headerName(b[1:])
				if name == "" {
					return nil, fmt.Errorf("line %d: record %d has no name", line, len(g.names)+1)
				}
				g.names = append(g.names, name)
				g.start = append(g.start, len(g.seq))
			} else {
				b = trimEOL(b)
				if len(g.names) == 0 {
					if len(trimSpace(b)) > 0 {
						return nil, fmt.Errorf("line %d: sequence before the first '>' header", line)
					}
				} else if isLetters(b) {
					g.seq = append(g.seq, b...)
				} else {
					for i, c := range b {
						if c == ' ' || c == '\t' || c == '\r' {
							continue
						}
						if !letter[c] {
							return nil, fmt.Errorf("record %s (line %d): unexpected byte %q at column %d", g.names[len(g.names)-1], line, c, i+1)
						}
						g.seq = append(g.seq, c)
					}
				}
			}
		}
		if err != nil {
			if errors.Is(err, bufio.ErrBufferFull) {
				continue
			}
			if err == io.EOF {
				break
			}
			return nil, err
		}
	}
	if len(g.names) == 0 {
		return nil, errors.New("no FASTA records")
	}
	if limit > 0 && len(g.seq) > limit {
		g.seq = g.seq[:limit]
	}
	g.start = append(g.start, len(g.seq))
	return g, nil
}

// headerName returns the first word of a header line (without its '>').
func headerName(h []byte) string {
	i := 0
	for i < len(h) && (h[i] == ' ' || h[i] == '\t') {
		i++
	}
	j := i
	for j < len(h) && h[j] != ' ' && h[j] != '\t' && h[j] != '\n' && h[j] != '\r' {
		j++
	}
	return string(h[i:j])
}

var letter = func() (t [256]bool) {
	for c := 'A'; c <= 'Z'; c++ {
		t[c], t[c|0x20] = true, true
	}
	return t
}()

// isLetters reports whether b is letters only: the common sequence line, appended whole.
func isLetters(b []byte) bool {
	ok := true
	for _, c := range b {
		ok = ok && letter[c]
	}
	return ok
}

func trimEOL(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return b
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t' || b[0] == '\r' || b[0] == '\n') {
		b = b[1:]
	}
	return trimEOL(b)
}

// writeRecords writes records as FASTA, width bases a line, formatting blocks of lines on
// threads goroutines and writing them in order: the same bytes as a fastaWriter, faster for a
// genome held in memory.
func writeRecords(w io.Writer, names []string, seq func(i int) []byte, width, threads int) error {
	blockBases := max(1, (4<<20)/width) * width
	type block struct{ rec, off int }
	var blocks []block
	for i := range names {
		n := len(seq(i))
		for off := 0; off == 0 || off < n; off += blockBases {
			blocks = append(blocks, block{i, off})
		}
	}
	return ordered(len(blocks), threads, func(k int, buf []byte) []byte {
		b := blocks[k]
		if need := len(names[b.rec]) + 2 + blockBases + blockBases/width + 1; cap(buf) < need {
			buf = make([]byte, 0, need)
		}
		if b.off == 0 {
			buf = append(buf, '>')
			buf = append(buf, names[b.rec]...)
			buf = append(buf, '\n')
		}
		s := seq(b.rec)
		s = s[b.off:min(b.off+blockBases, len(s))]
		for len(s) > 0 {
			n := min(width, len(s))
			buf = append(buf, s[:n]...)
			buf = append(buf, '\n')
			s = s[n:]
		}
		return buf
	}, func(b []byte) error {
		_, err := w.Write(b)
		return err
	})
}
