// Command bgzf compresses stdin to stdout as BGZF (what bgzip writes: gzip members of at most 64
// KiB, each naming its size, then an empty member), on every core. It makes BGZF inputs for
// sapipe's benchmarks on hosts without bgzip:
//
//	bgzf < reads.fq > reads.fq.gz
package main

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"runtime"

	"github.com/klauspost/compress/flate"
)

// blockBytes is bgzip's input a member.
const blockBytes = 65280

// member returns data (at most blockBytes) as one BGZF member, deflated at level.
func member(data []byte, level int) ([]byte, error) {
	var def bytes.Buffer
	w, err := flate.NewWriter(&def, level)
	if err != nil {
		return nil, err
	}
	w.Write(data)
	if err := w.Close(); err != nil {
		return nil, err
	}
	m := []byte{0x1f, 0x8b, 8, 4, 0, 0, 0, 0, 0, 0xff, 6, 0, 'B', 'C', 2, 0, 0, 0}
	size := len(m) + def.Len() + 8
	if size > 1<<16 {
		return nil, fmt.Errorf("a member of %d bytes", size)
	}
	binary.LittleEndian.PutUint16(m[16:], uint16(size-1))
	m = append(m, def.Bytes()...)
	m = binary.LittleEndian.AppendUint32(m, crc32.ChecksumIEEE(data))
	return binary.LittleEndian.AppendUint32(m, uint32(len(data))), nil
}

// compress writes src to dst as BGZF, blocks deflated on threads goroutines, in order.
func compress(dst io.Writer, src io.Reader, threads, level int) error {
	type job struct {
		in   []byte
		out  []byte
		err  error
		done chan struct{}
	}
	order := make(chan *job, 2*threads)
	work := make(chan *job, 2*threads)
	readErr := make(chan error, 1)
	go func() {
		defer close(order)
		defer close(work)
		for {
			j := &job{in: make([]byte, blockBytes), done: make(chan struct{})}
			n, err := io.ReadFull(src, j.in)
			if n > 0 {
				j.in = j.in[:n]
				order <- j
				work <- j
			}
			if err == io.EOF || err == io.ErrUnexpectedEOF {
				readErr <- nil
				return
			}
			if err != nil {
				readErr <- err
				return
			}
		}
	}()
	for range threads {
		go func() {
			for j := range work {
				j.out, j.err = member(j.in, level)
				close(j.done)
			}
		}()
	}
	w := bufio.NewWriterSize(dst, 1<<20)
	for j := range order {
		<-j.done
		if j.err != nil {
			return j.err
		}
		if _, err := w.Write(j.out); err != nil {
			return err
		}
	}
	if err := <-readErr; err != nil {
		return err
	}
	eof, err := member(nil, level)
	if err != nil {
		return err
	}
	w.Write(eof)
	return w.Flush()
}

func main() {
	if len(os.Args) > 1 {
		fmt.Fprintln(os.Stderr, "usage: bgzf < IN > IN.gz")
		os.Exit(2)
	}
	if err := compress(os.Stdout, os.Stdin, runtime.GOMAXPROCS(0), 6); err != nil {
		fmt.Fprintln(os.Stderr, "bgzf:", err)
		os.Exit(1)
	}
}
