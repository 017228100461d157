package stages

import (
	"io"
	"os"
	"sync"
)

// fileWriter writes the text of batches into a regular file at offsets given out in order, on
// several goroutines at once, so that copying the text into the file, which is most of what is
// left on the sink when the output is large, is not done by one goroutine alone. Other writers
// (pipes, terminals, files opened for appending) get the text in order through a bufio.Writer.
type fileWriter struct {
	f    *os.File
	next int64 // offset of the next batch's text
	jobs chan fileJob
	wg   sync.WaitGroup

	mu  sync.Mutex
	err error
}

type fileJob struct {
	text []byte
	off  int64
	done func()
}

// newFileWriter returns a writer into w at its current offset when w is a regular file that can be
// written at offsets, else nil.
func newFileWriter(w io.Writer, writers int) *fileWriter {
	f, start, _, ok := fileAt(w)
	if !ok {
		return nil
	}
	fw := &fileWriter{f: f, next: start, jobs: make(chan fileJob, writers)}
	for range writers {
		fw.wg.Add(1)
		go func() {
			defer fw.wg.Done()
			for j := range fw.jobs {
				if fw.failed() == nil {
					if _, err := f.WriteAt(j.text, j.off); err != nil {
						fw.mu.Lock()
						if fw.err == nil {
							fw.err = err
						}
						fw.mu.Unlock()
					}
				}
				j.done()
			}
		}()
	}
	return fw
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
	fw.jobs <- fileJob{text, fw.next, done}
	fw.next += int64(len(text))
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
	if fw.jobs != nil {
		if err := fw.wait(); err != nil {
			return err
		}
	}
	_, err := fw.f.Seek(fw.next, io.SeekStart)
	return err
}
