// Command bgzf compresses stdin to stdout as BGZF (what bgzip writes: gzip members of at most 64
// KiB, each naming its size, then an empty member), on every core. It makes BGZF inputs for
// sapipe's benchmarks on hosts without bgzip:
//
//	bgzf < reads.fq > reads.fq.gz
package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"runtime"

	"github.com/sapipe/sapipe/formats"
)

// blockBytes is bgzip's input a member.
const blockBytes = 65280

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
				j.out, j.err = formats.AppendBGZFMember(nil, j.in, level)
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
	eof, err := formats.AppendBGZFMember(nil, nil, level)
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
