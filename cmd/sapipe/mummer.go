package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/sapipe/sapipe/formats"
	"github.com/sapipe/sapipe/kernels"
	"github.com/sapipe/sapipe/kernels/cpu"
	"github.com/sapipe/sapipe/kernels/cuda"
	"github.com/sapipe/sapipe/stages"
)

const mummerHelp = `Finds maximal exact matches between a reference and queries, exactly as MUMmer 3.23's mummer
does (same options, same output), reading FASTA or FASTQ, plain or gzip/bzip2/zstd/xz compressed.
A query file "-" is stdin. Options come before the files and start with one dash, as in mummer.

Examples:
   sapipe mummer -mum -b -c ref.fa qry.fa > out.mums
   zcat reads.fq.gz | sapipe mummer -maxmatch -l 20 -b -c ref.fa - > hits.mums
   sapipe mummer -maxmatch -l 20 -b -c -o hits.mums ref.fa reads_1.fq.gz reads_2.fq.gz`

// mummerConfig is a parsed `sapipe mummer` command line.
type mummerConfig struct {
	opts    stages.MummerOptions
	ref     string
	queries []string
	output  string // "" or "-": stdout
	quiet   bool
	device  string // --device
	verbose bool
	index   bool // ref is an index file (--index, or a .sai in the reference's place)
	batch   bool // --batch-size was given
	// gpuMemory bounds the device memory of the reference's index on each GPU (--gpu-memory; 0:
	// what the card has free): where the cards of --device gpu:all hold the index together but one
	// card does not, each holds some of its pages.
	gpuMemory int64
}

func mummerCommand(e *env) *cli.Command {
	var (
		mum, mumref, mumcand, maxmatch = &onceBool{name: "mum"}, &onceBool{name: "mumreference"}, &onceBool{name: "mumcand"}, &onceBool{name: "maxmatch"}
		nuc, both, rev, str, revpos    = &onceBool{name: "n"}, &onceBool{name: "b"}, &onceBool{name: "r"}, &onceBool{name: "s"}, &onceBool{name: "c"}
		four, showLen                  = &onceBool{name: "F"}, &onceBool{name: "L"}
		minLen                         = &positiveInt{name: "l", value: 20}
	)
	mb := func(v *onceBool, usage string) cli.Flag {
		return &cli.GenericFlag{Name: v.name, Value: v, Usage: usage}
	}
	return &cli.Command{
		Name:        "mummer",
		Usage:       "MUMmer-compatible maximal exact matches",
		UsageText:   "sapipe mummer [options] <reference-file> <query-file>...",
		Description: mummerHelp,
		Flags: []cli.Flag{
			mb(mum, "compute maximal matches that are unique in both sequences"),
			mb(mumref, "compute maximal matches that are unique in the reference (default)"),
			mb(mumcand, "same as -mumreference"),
			mb(maxmatch, "compute all maximal matches regardless of their uniqueness"),
			mb(nuc, "match only the characters a, c, g, or t"),
			&cli.GenericFlag{Name: "l", Value: minLen, Usage: "minimum length of a match", DefaultText: "20"},
			mb(both, "compute forward and reverse complement matches"),
			mb(rev, "only compute reverse complement matches"),
			mb(str, "show the matching substrings"),
			mb(revpos, "report the query position of a reverse complement match relative to the forward query"),
			mb(four, "force 4 column output format regardless of the number of reference sequences"),
			mb(showLen, "show the length of the query sequences on the header line"),
			&cli.IntFlag{Name: "t", Aliases: []string{"threads"}, Value: runtime.GOMAXPROCS(0), Usage: "worker threads"},
			&cli.IntFlag{Name: "page-size", Usage: "most bases of the reference a page holds (0: as few pages as fit, one up to 2^31-3 bases)"},
			&cli.IntFlag{Name: "batch-size", Value: 1 << 19, Usage: "query bases per batch"},
			&cli.StringFlag{Name: "gpu-memory", Usage: "most device memory the reference's index takes on each GPU (`SIZE`, k, M, G suffixes; default: what the card has free)"},
			&cli.StringFlag{Name: "o", Aliases: []string{"output"}, Usage: "write to `FILE` (complete or not at all) instead of stdout"},
			&cli.BoolFlag{Name: "q", Aliases: []string{"quiet"}, Usage: "no progress on stderr"},
			deviceFlag(),
			&cli.BoolFlag{Name: "v", Aliases: []string{"verbose"}, Usage: "print timings per stage on stderr"},
			&cli.StringFlag{Name: "index", Usage: "the reference as an index `FILE` from sapipe index (every file argument is then a query)"},
		},
		OnUsageError: func(_ *cli.Context, err error, _ bool) error { return usageError{flagMessage(err)} },
		Action: func(c *cli.Context) error {
			cfg := &mummerConfig{quiet: c.Bool("q"), verbose: c.Bool("v"), output: c.String("o"), device: c.String("device")}
			o := &cfg.opts
			o.MinLen = minLen.value
			o.NucleotidesOnly, o.ReversePositions = nuc.set, revpos.set
			o.ShowString, o.FourColumn, o.ShowLen = str.set, four.set, showLen.set
			o.Threads, o.PageSize, o.BatchSize = c.Int("t"), c.Int("page-size"), c.Int("batch-size")
			cfg.batch = c.IsSet("batch-size")
			if err := checkModes(mum.set, mumref.set, mumcand.set, maxmatch.set, both.set, rev.set, revpos.set); err != nil {
				return err
			}
			switch {
			case mum.set:
				o.Mode = kernels.Mum
			case maxmatch.set:
				o.Mode = kernels.MaxMatch
			default:
				o.Mode = kernels.MumReference
			}
			o.Strands = stages.Strands{Forward: !rev.set, Reverse: both.set || rev.set}
			if o.Threads < 1 || o.BatchSize < 1 || o.PageSize < 0 {
				return usageError{"-t and --batch-size must be positive, --page-size not negative"}
			}
			var err error
			if cfg.gpuMemory, err = gpuMemoryFlag(c); err != nil {
				return err
			}
			if cfg.ref = c.String("index"); cfg.ref != "" {
				cfg.index, cfg.queries = true, c.Args().Slice()
				if len(cfg.queries) == 0 {
					return usageError{"missing query file arguments"}
				}
				return runMummer(c.Context, e, cfg)
			}
			if c.NArg() < 2 {
				return usageError{"missing file arguments"}
			}
			cfg.ref, cfg.queries = c.Args().First(), c.Args().Tail()
			cfg.index = stages.IsIndexFile(cfg.ref)
			return runMummer(c.Context, e, cfg)
		},
	}
}

// checkModes rejects the option combinations mummer rejects, with mummer's words.
func checkModes(mum, mumref, mumcand, maxmatch, both, rev, revpos bool) error {
	modes := []struct {
		name string
		set  bool
	}{{"mum", mum}, {"mumreference", mumref}, {"mumcand", mumcand}, {"maxmatch", maxmatch}}
	for i, a := range modes {
		for _, b := range modes[i+1:] {
			if a.set && b.set && !(a.name == "mumreference" && b.name == "mumcand") {
				return usageError{fmt.Sprintf("option -%s and option -%s exclude each other", a.name, b.name)}
			}
		}
	}
	if both && rev {
		return usageError{"option -b and option -r exclude each other"}
	}
	if revpos && !both && !rev {
		return usageError{"option -c requires either option -b or -r"}
	}
	return nil
}

// flagMessage rewrites the flag package's errors in mummer's terms.
func flagMessage(err error) string {
	s := err.Error()
	if rest, ok := strings.CutPrefix(s, "flag provided but not defined: "); ok {
		return fmt.Sprintf("illegal option %q", rest)
	}
	if rest, ok := strings.CutPrefix(s, "flag needs an argument: "); ok {
		return fmt.Sprintf("option %s needs an argument", rest)
	}
	if strings.HasPrefix(s, "invalid value ") {
		if i := strings.Index(s, ": "); i >= 0 {
			return s[i+2:]
		}
	}
	return s
}

// backendFuture is a backend being opened on another goroutine.
type backendFuture struct {
	done chan struct{} // closed when b, note and err are set
	b    kernels.Backend
	note string
	err  error
}

func openBackendAsync(e *env, spec string, threads int, t talk, t0 time.Time) *backendFuture {
	f := &backendFuture{done: make(chan struct{})}
	go func() {
		f.b, f.note, f.err = openBackendNote(e, spec, threads, t, 0)
		cuda.Trace("backend opened", t0)
		close(f.done)
	}()
	return f
}

// opened reports whether the backend is open (or failed to open) already.
func (f *backendFuture) opened() bool {
	select {
	case <-f.done:
		return true
	default:
		return false
	}
}

// pendingMatcher is a Matcher whose index is being built on another goroutine: Match waits for
// it, and fails with the build's error.
type pendingMatcher struct {
	ready   chan struct{}
	m       kernels.Matcher
	err     error
	readyAt time.Time // when the matcher was built
}

func newPendingMatcher(build func() (kernels.Matcher, error)) *pendingMatcher {
	p := &pendingMatcher{ready: make(chan struct{})}
	go func() {
		p.m, p.err = build()
		p.readyAt = time.Now()
		close(p.ready)
	}()
	return p
}

func (p *pendingMatcher) Match(b *kernels.Batch, res *kernels.Result) error {
	<-p.ready
	if p.err != nil {
		return p.err
	}
	return p.m.Match(b, res)
}

// GrowCodes implements kernels.CodeMemory with the matcher's memory once it is built (a GPU's
// pinned memory), Go's before.
func (p *pendingMatcher) GrowCodes(codes []byte, n int) []byte {
	select {
	case <-p.ready:
		if cm, ok := p.m.(kernels.CodeMemory); ok && p.err == nil {
			return cm.GrowCodes(codes, n)
		}
	default:
	}
	return slices.Grow(codes, n)
}

func (p *pendingMatcher) Close() error {
	<-p.ready
	if p.m != nil {
		return p.m.Close()
	}
	return nil
}

func runMummer(ctx context.Context, e *env, cfg *mummerConfig) (err error) {
	for _, q := range cfg.queries {
		if q == "-" {
			continue
		}
		if _, err := os.Stat(q); err != nil {
			return fmt.Errorf("query file %w", unwrapPathError(err))
		}
	}
	logf := func(string, ...any) {}
	if cfg.verbose {
		logf = func(format string, args ...any) {
			noteMu.Lock()
			fmt.Fprintf(e.stderr, "sapipe mummer: "+format+"\n", args...)
			noteMu.Unlock()
		}
	}
	// The device is opened (for a GPU: the driver initialised, a context made and the kernels
	// loaded, a few hundred milliseconds) while the reference is read. An error opening it is
	// reported before one reading the reference, as if they had been done in turn.
	t0 := time.Now()
	sized := cfg.queries              // an index file's size does not count: the CPU maps it
	if !cfg.index && len(sized) > 0 { // (no query files: stdin)
		sized = append(slices.Clone(cfg.queries), cfg.ref)
	}
	cfg.device = autoDevice(cfg.device, smallInput, sized...) // small inputs: the CPU, without starting CUDA
	fb := openBackendAsync(e, cfg.device, cfg.opts.Threads, talk{quiet: cfg.quiet, verbose: cfg.verbose}, t0)
	var noteOnce sync.Once
	waitBackend := func() error {
		<-fb.done
		if fb.err != nil {
			return fb.err
		}
		noteOnce.Do(func() {
			if fb.note != "" && !cfg.quiet {
				printNote(e, fb.note)
			}
		})
		return nil
	}
	// The index file's unmapping (a fraction of a second for a large index whose pages were
	// read) runs beside the backend's teardown; both end before the command returns.
	var unmapping sync.WaitGroup
	defer unmapping.Wait()
	defer func() {
		closeBackend := func() {
			if <-fb.done; fb.b != nil {
				fb.b.Close()
			}
		}
		if fb.opened() {
			closeBackend()
		} else {
			go closeBackend() // returned early: it closes when open
		}
	}()
	var ref *kernels.Reference
	var build func() (kernels.Matcher, error)
	if cfg.index {
		// For a device, the pages are checked while they are copied there (nothing is matched
		// before the checks pass); on the CPU they are checked first.
		ix, err := openIndexFile(cfg.ref, cfg.opts.NucleotidesOnly, true, cfg.opts.Threads, cfg.device != "cpu", false, logf)
		if err != nil {
			if berr := waitBackend(); berr != nil {
				return berr
			}
			return err
		}
		defer unmapping.Go(func() {
			ix.Close()
			cuda.Trace("index closed", t0)
		})
		ref = ix.Ref
		build = func() (kernels.Matcher, error) {
			m, err := ix.MatcherOn(fb.b, kernels.MatchOptions{Mode: cfg.opts.Mode, MinLen: cfg.opts.MinLen, DeviceMemory: cfg.gpuMemory})
			if err != nil {
				if ierr := (*formats.IndexError)(nil); errors.As(err, &ierr) {
					return nil, err // names the file already
				}
				return nil, fmt.Errorf("%s: %w", cfg.ref, err)
			}
			logChecks(ix, logf)
			logf("ready to match in %v", time.Since(t0).Round(time.Microsecond))
			return m, nil
		}
	} else {
		ref, err = stages.LoadReference(cfg.ref, cfg.opts.NucleotidesOnly, e.stdin)
		cuda.Trace("reference read", t0)
		if err != nil {
			if berr := waitBackend(); berr != nil {
				return berr
			}
			return err
		}
		logf("read reference %s: %d records, %d bases in %v", cfg.ref, len(ref.Names), len(ref.Text), time.Since(t0).Round(time.Millisecond))
		build = func() (kernels.Matcher, error) {
			t1 := time.Now()
			m, err := fb.b.NewMatcher(ref, kernels.MatchOptions{Mode: cfg.opts.Mode, MinLen: cfg.opts.MinLen, PageSize: cfg.opts.PageSize, DeviceMemory: cfg.gpuMemory})
			if err != nil {
				return nil, fmt.Errorf("%s: %w", cfg.ref, err)
			}
			cuda.Trace("reference indexed", t1)
			logf("indexed the reference on %s in %v", fb.b.Name(), time.Since(t1).Round(time.Millisecond))
			return m, nil
		}
	}
	var m kernels.Matcher
	var pending *pendingMatcher
	// Where the run goes decides how it runs (below), so the backend's opening is waited for
	// here, once the reference is read: on a host whose driver finds no GPU, auto gives the CPU
	// after cuInit fails (~0.2 s), and a reference read faster than that must not take the GPU's
	// way (twice the workers, batches four times larger: 267 MB against 90 MB for 200k reads
	// against E. coli).
	// A GPU named (gpu, gpu:all, gpu:N,...) is never the CPU: the queries are read while CUDA
	// starts (0.4-0.5 s with two cards on the lent H200 hosts), and an error opening it is the
	// matcher's, reported as before.
	onCPU := cfg.device == "cpu"
	if !onCPU && !namesGPU(cfg.device) {
		if err := waitBackend(); err != nil {
			return err
		}
		_, onCPU = fb.b.(*cpu.Backend)
	}
	if onCPU {
		// On the CPU the index is built on every core, then the queries are matched. The
		// reader's buffers are garbage now; collect them so that the index reuses their memory.
		// From here on most of what is allocated stays live (the index, then the streaming's few
		// buffers): a heap allowed to grow to twice the live data (Go's default) would hold far
		// more than MUMmer does for the same job; a quarter more is enough, as the streaming
		// makes little garbage.
		if err := waitBackend(); err != nil {
			return err
		}
		if !cfg.index {
			runtime.GC()
			debug.SetGCPercent(25)
		}
		if m, err = build(); err != nil {
			return err
		}
		// The index's build temporaries are garbage now: collect them before the queries' buffers
		// need memory, so that the peak is the larger of the two phases, not their sum.
		if !cfg.index {
			debug.FreeOSMemory()
		}
	} else {
		// A GPU (or a device not yet open) builds its index while the first batches of queries
		// are read, parsed and encoded; their matching waits for it.
		if !cfg.index {
			debug.SetGCPercent(25)
		}
		// The workers wait for the device's round trips much of the time: twice as many as
		// threads keep the cores busy, and batches four times the CPU's make fuller launches.
		// On the lent H200 (16 cores), 10 M reads took 1.77 s so against 2.0-2.1 s with 16 workers
		// and the CPU's batches; output does not depend on either.
		cfg.opts.Threads *= 2
		if !cfg.batch {
			cfg.opts.BatchSize *= 4
		}
		pending = newPendingMatcher(func() (kernels.Matcher, error) {
			if err := waitBackend(); err != nil {
				return nil, err
			}
			return build()
		})
		m = pending
	}
	defer func() {
		m.Close()
		cuda.Trace("matcher closed", t0)
	}()

	if !cfg.quiet && e.stderrTerminal {
		cfg.opts.Progress = &stages.Progress{W: e.stderr, Label: "sapipe mummer"}
	}
	out, commit, abort, err := openOutput(cfg.output, e.stdout)
	if err != nil {
		return err
	}
	t2 := time.Now()
	if err := stages.Mummer(ctx, cfg.opts, ref, m, cfg.queries, e.stdin, out); err != nil {
		abort()
		if pending != nil {
			// The device's or the index's error, as it would have been reported before the
			// queries were read.
			if <-pending.ready; pending.err != nil {
				return pending.err
			}
		}
		return err
	}
	if pending != nil {
		// No query reached the matcher (none at all, say): its build may still have failed.
		if <-pending.ready; pending.err != nil {
			abort()
			return pending.err
		}
	}
	cuda.Trace("queries matched", t2)
	if err := commit(); err != nil {
		return err
	}
	cuda.Trace("output committed", t2)
	if pending != nil && pending.readyAt.After(t2) {
		// The queries were read while the index was built or copied to the device; most of the
		// time before it was ready is that.
		logf("matched queries in %v, %v of it after the index was ready", time.Since(t2).Round(time.Millisecond), time.Since(pending.readyAt).Round(time.Millisecond))
	} else {
		logf("matched queries in %v", time.Since(t2).Round(time.Millisecond))
	}
	return nil
}

func unwrapPathError(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s: %w", pe.Path, pe.Err)
	}
	return err
}

// removals are the old outputs being removed (openOutput); run waits for them.
var removals sync.WaitGroup

// openOutput returns where results go. A named file is written under a temporary name beside it
// and renamed into place by commit, so a failed run never leaves a partial file at the final path.
// An earlier file at path is replaced (moved aside just before the rename, so for a moment there
// is none, and removed). It is not synced to disk before the rename: that protects against a crash
// of the machine, not of the run, and would make every run wait for the disk, as MUMmer and the
// other tools of a pipeline do not. Only compress and decompress sync, because they then remove their inputs.
func openOutput(path string, stdout io.Writer) (w io.Writer, commit func() error, abort func(), err error) {
	if path == "" || path == "-" {
		return stdout, func() error { return nil }, func() {}, nil
	}
	dir, base := ".", path
	if i := strings.LastIndexByte(path, '/'); i >= 0 {
		dir, base = path[:i+1], path[i+1:]
	}
	f, err := os.CreateTemp(dir, "."+base+".tmp*")
	if err != nil {
		return nil, nil, nil, fmt.Errorf("output %w", unwrapPathError(err))
	}
	abort = func() { f.Close(); os.Remove(f.Name()) }
	commit = func() error {
		t0 := time.Now()
		defer cuda.Trace("output closed, moved into place", t0)
		if err := f.Close(); err != nil {
			os.Remove(f.Name())
			return fmt.Errorf("writing %s: %w", path, err)
		}
		if err := os.Chmod(f.Name(), 0o644); err != nil {
			os.Remove(f.Name())
			return err
		}
		// A file already at path is moved aside first: replacing it by the rename itself would
		// make ext4 (auto_da_alloc) write the new file's data to disk before the rename returns,
		// tens of milliseconds for a large output, a sync the run does not need. It is removed on
		// another goroutine (run waits for it): unlinking a large file takes a while (0.23 s for
		// count's 10 M lines on the lent H200's disk), which the run's teardown hides.
		if fi, err := os.Lstat(path); err == nil && !fi.IsDir() {
			old := f.Name() + ".old"
			if os.Rename(path, old) == nil {
				removals.Go(func() { os.Remove(old) })
			} else {
				os.Remove(path)
			}
			cuda.Trace("the old output moved aside", t0)
		}
		if err := os.Rename(f.Name(), path); err != nil {
			os.Remove(f.Name())
			return fmt.Errorf("output %w", unwrapPathError(err))
		}
		return nil
	}
	return f, commit, abort, nil
}
