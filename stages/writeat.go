package stages

import (
	"bufio"
	"io"
	"os"
	"sync"
)

// orderedOutput writes the text of batches, handed over in order, into w: a regular file that can
// be written at offsets through a fileWriter, anything else through a bufio.Writer.
type orderedOutput struct {
	fw *fileWriter
	bw *bufio.Writer
}

// newOrderedOutput returns the output into w, with up to writers goroutines copying into a file.
func newOrderedOutput(w io.Writer, writers int) *orderedOutput {
	if fw := newFileWriter(w, writers); fw != nil {
		return &orderedOutput{fw: fw}
	}
	return &orderedOutput{bw: bufio.NewWriterSize(w, 1<<20)}
}

// write hands over text, the next in order, and calls done once text is no longer needed (at
// once where it is buffered); it returns the first error of an earlier write.
func (o *orderedOutput) write(text []byte, done func()) error {
	if o.fw != nil {
		return o.fw.write(text, done)
	}
	_, err := o.bw.Write(text)
	done()
	return err
}

// close writes what is left and returns the first error.
func (o *orderedOutput) close() error {
	if o.fw != nil {
		return o.fw.close()
	}
	return o.bw.Flush()
}

// release waits for the copies handed out, after an error: a file's writers are stopped and its
// reserve cut; a buffer's text is dropped.
func (o *orderedOutput) release() {
	if o.fw != nil {
		o.fw.close()
	}
}

// fileWriter writes the text of batches into a regular file at offsets given out in order, on
// several goroutines at once, so that copying the text into the file, which is most of what is
// left on the sink when the output is large, is not done by one goroutine alone (orderedOutput
// gives pipes, terminals and files opened for appending a bufio.Writer instead).
type fileWriter struct {
	f    *os.File
	next int64      // offset of the next batch's text
	m    *outputMap // Linux: the text past its first bytes goes through mappings; nil: pwrite
	mapw *outputMap // m as made, cut at close
	jobs chan fileJob
	wg   sync.WaitGroup

	mu  sync.Mutex
	err error
}

// On Linux, the text past an output's first 64 MiB goes through mapped windows of 256 MiB
// (outputMap): reserving and mapping one is well under a millisecond of the sink's, against the
// tenth of a second its copies take, and small outputs reserve nothing. Variables, so that tests
// can lower them.
var (
	mappedOutputFrom   = int64(64 << 20)
	mappedOutputWindow = int64(256 << 20)
)

type fileJob struct {
	text []byte
	off  int64
	done func()
	// The windows of m that the text reaches, first to last (none where last < first); the
	// text before m.from is written by pwrite.
	m           *outputMap
	first, last int64
}

// newFileWriter returns a writer into w at its current offset when w is a regular file that can be
// written at offsets, else nil.
func newFileWriter(w io.Writer, writers int) *fileWriter {
	f, start, size, ok := fileAt(w)
	if !ok {
		return nil
	}
	fw := &fileWriter{f: f, next: start, jobs: make(chan fileJob, writers)}
	fw.m = newOutputMap(f, start, size)
	fw.mapw = fw.m
	for range writers {
		fw.wg.Add(1)
		go func() {
			defer fw.wg.Done()
			for j := range fw.jobs {
				if err := fw.failed(); err == nil {
					fw.fail(j.copy(f))
				}
				j.done()
			}
		}()
	}
	return fw
}

// copy writes j's text into f: by pwrite before its first window, through the windows after.
func (j *fileJob) copy(f *os.File) error {
	text := j.text
	if j.m != nil && j.first <= j.last {
		for i := j.first; i <= j.last; i++ {
			if err := j.m.copyAt(i, j.text, j.off); err != nil {
				return err
			}
		}
		text = text[:max(min(j.m.from-j.off, int64(len(text))), 0)]
	}
	if len(text) == 0 {
		return nil
	}
	_, err := f.WriteAt(text, j.off)
	return err
}

// fail records err, where it is the first.
func (fw *fileWriter) fail(err error) {
	if err == nil {
		return
	}
	fw.mu.Lock()
	if fw.err == nil {
		fw.err = err
	}
	fw.mu.Unlock()
}

// fileAt returns w as a regular file that can be written at offsets (not opened for appending),
// with its current offset and its size.
func fileAt(w io.Writer) (f *os.File, off, size int64, ok bool) {
	f, ok = w.(*os.File)
	if !ok {
		return nil, 0, 0, false
	}
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() || !writableAt(f) {
		return nil, 0, 0, false
	}
	if off, err = f.Seek(0, io.SeekCurrent); err != nil {
		return nil, 0, 0, false
	}
	return f, off, fi.Size(), true
}

func (fw *fileWriter) failed() error {
	fw.mu.Lock()
	defer fw.mu.Unlock()
	return fw.err
}

// write hands text, the next in order, to a writing goroutine, which calls done once it is in the
// file; it returns the first error of an earlier write.
func (fw *fileWriter) write(text []byte, done func()) error {
	if err := fw.failed(); err != nil {
		return err
	}
	j := fileJob{text: text, off: fw.next, done: done, first: 0, last: -1}
	end := fw.next + int64(len(text))
	if m := fw.m; m != nil && end > m.from {
		j.m, j.first = m, (max(fw.next, m.from)-m.from)/m.window
		for i := j.first; i <= (end-1-m.from)/m.window; i++ {
			ok, err := m.acquire(i)
			if err != nil {
				fw.fail(err)
				return err
			}
			if !ok { // no window was made: pwrite for the whole file
				fw.m, j.m = nil, nil
				break
			}
			j.last = i
		}
	}
	fw.jobs <- j
	fw.next = end
	if fw.m != nil {
		fw.m.passed(end)
	}
	return nil
}

// wait waits for the writes handed out so far.
func (fw *fileWriter) wait() error {
	close(fw.jobs)
	fw.wg.Wait()
	fw.jobs = nil
	return fw.failed()
}

// close waits for every write and leaves the file's offset after the text, as sequential writes
// would have.
func (fw *fileWriter) close() error {
	var err error
	if fw.jobs != nil {
		err = fw.wait()
	}
	if fw.mapw != nil {
		if e := fw.mapw.close(fw.next); err == nil {
			err = e
		}
	}
	if err != nil {
		return err
	}
	_, err = fw.f.Seek(fw.next, io.SeekStart)
	return err
}
