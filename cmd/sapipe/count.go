package main

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/sapipe/sapipe/kernels"
	"github.com/sapipe/sapipe/kernels/cpu"
	"github.com/sapipe/sapipe/kernels/cuda"
	"github.com/sapipe/sapipe/stages"
)

const countHelp = `Counts the exact occurrences of each pattern in an indexed reference by FM-index backward
search, and prints one line per pattern, in input order: its name, a tab and the number of
occurrences (on the strands searched: with -b the count is forward plus reverse complement, so it
is the number of lines "sapipe locate -b" prints for the pattern).

Patterns are FASTA or FASTQ records, or one pattern a line (the name is then the pattern itself;
blank lines are skipped), plain or compressed; "-" or no file is stdin. Case is ignored; a pattern
byte that does not occur in the reference (or, with an index built with -n, anything but a, c, g,
t) matches nothing, and an empty pattern has no occurrences. Occurrences never span two reference
records.

-i takes an index made by "sapipe index", mapped into memory at once; a FASTA file there is
indexed in memory first (-n then encodes it as "sapipe mummer -n" does). With --device auto an
index file is searched on the CPU, unless it is of 8 GiB or more: then on a GPU where there is
one, which holds the index's rank structures while the host checks the file; --device gpu
searches on the GPU.

Examples:
   sapipe count -i ecoli.sai primers.txt
   zcat reads.fq.gz | sapipe count -b -i ecoli.sai - > counts.tsv`

// searchFlags are the options of count and locate.
func searchFlags() []cli.Flag {
	return append([]cli.Flag{
		&cli.StringFlag{Name: "i", Aliases: []string{"index"}, Usage: "the reference: an index `FILE` from sapipe index (or a FASTA file, indexed first)"},
		&cli.BoolFlag{Name: "b", Usage: "search both strands: each pattern and its reverse complement"},
		&cli.BoolFlag{Name: "r", Usage: "search only the reverse complement of each pattern"},
		&cli.BoolFlag{Name: "n", Usage: "match only a, c, g, t (must agree with the index)"},
		&cli.IntFlag{Name: "batch-size", Value: 1 << 20, Usage: "pattern bases per batch"},
	}, runFlags("worker threads")...)
}

func countCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:         "count",
		Usage:        "number of exact occurrences of each pattern in an indexed reference",
		UsageText:    "sapipe count -i INDEX [-b|-r] [-o FILE] [patterns-file...|-]",
		Description:  countHelp,
		Flags:        searchFlags(),
		OnUsageError: func(_ *cli.Context, err error, _ bool) error { return usageError{err.Error()} },
		Action:       func(c *cli.Context) error { return runSearchCommand(c, e, "count", false) },
	}
}

// runSearchCommand parses the command line of count or locate and runs it.
func runSearchCommand(c *cli.Context, e *env, cmd string, locate bool) error {
	paths, err := interspersed(c)
	if err != nil {
		return err
	}
	if len(paths) == 0 {
		paths = []string{"-"}
	}
	if c.String("i") == "" {
		return usageError{"-i INDEX is needed: the reference to search, from sapipe index"}
	}
	if c.String("i") == "-" && slices.Contains(paths, "-") {
		return usageError{"-i - and patterns on stdin: only one of them can come from stdin"}
	}
	if c.Bool("b") && c.Bool("r") {
		return usageError{"option -b and option -r exclude each other"}
	}
	if c.Int("batch-size") < 1 {
		return usageError{"--batch-size must be positive"}
	}
	if c.Int("t") < 1 {
		return usageError{fmt.Sprintf("-t %d: want a positive number of threads", c.Int("t"))}
	}
	opts := stages.SearchOptions{
		Strands:   stages.Strands{Forward: !c.Bool("r"), Reverse: c.Bool("b") || c.Bool("r")},
		Locate:    locate,
		Threads:   c.Int("t"),
		BatchSize: c.Int("batch-size"),
	}
	return runSearch(c.Context, e, c, cmd, opts, paths)
}

func runSearch(ctx context.Context, e *env, c *cli.Context, cmd string, opts stages.SearchOptions, paths []string) error {
	logf := logger(c, e, cmd)
	tOpen := time.Now()
	isIndex := stages.IsIndexFile(c.String("i"))
	b, ix, err := openSearchIndex(e, c, searchDevice(c.String("device"), c.String("i"), isIndex), isIndex, opts.Threads, logf)
	if err != nil {
		return err
	}
	// The index's unmapping runs beside the backend's teardown (as mummer's).
	var unmapping sync.WaitGroup
	defer unmapping.Wait()
	defer func() { t := time.Now(); b.Close(); cuda.Trace("backend closed", t) }()
	defer unmapping.Go(func() { t := time.Now(); ix.Close(); cuda.Trace("index closed", t) })
	cuda.Trace("index opened", tOpen)
	// A GPU holds the rank structures and k-mer tables alone, a seventh of the 3.1 Gbp
	// index's 17.8 GB to copy there: it finds the patterns' rows, and for locate the host reads
	// their positions from the suffix arrays.
	searcherOn := ix.CountSearcherOn
	if opts.Locate {
		searcherOn = ix.LocateSearcherOn
	}
	s, err := searcherOn(b)
	if err != nil {
		return err
	}
	defer s.Close()
	cuda.Trace("searcher ready", tOpen)
	logChecks(ix, logf)
	if _, onCPU := s.(*cpu.Searcher); !onCPU && !c.IsSet("batch-size") {
		// A device call per batch: larger batches than the CPU's. 10 M patterns against the 3.1
		// Gbp index (lent H200): 2.09-2.50 s with 2 MiB, 2.12-2.53 s with 1 MiB, 2.48-2.68 s with
		// 4 MiB, 3.28 s with 16 MiB (the host's work on each batch falls out of the caches).
		opts.BatchSize = 2 << 20
	}
	logf("searching on %s", b.Name())
	if !c.Bool("q") && e.stderrTerminal {
		opts.Progress = &stages.Progress{W: e.stderr, Label: "sapipe " + cmd}
	}
	out, commit, abort, err := openOutput(c.String("o"), e.stdout)
	if err != nil {
		return err
	}
	t0 := time.Now()
	if err := stages.Search(ctx, opts, ix, s, paths, e.stdin, out); err != nil {
		abort()
		return err
	}
	cuda.Trace("patterns searched", t0)
	if err := commit(); err != nil {
		return err
	}
	cuda.Trace("output committed", t0)
	logf("searched the patterns in %v", time.Since(t0).Round(time.Millisecond))
	return nil
}

// searchDevice is the device of count and locate. For auto: the CPU when -i is an index file
// under gpuSearchIndex, the GPU over it; the CPU when -i is a FASTA file under smallSAInput; a
// larger FASTA reference is indexed on the GPU, the patterns with it. On the lent H200 (16-core
// host) the CPU searched E. coli's index (4.6 Mbp) faster end to end with 1 M or 10 M patterns of
// 20-150 bases, count 0.13-0.26 s and 0.78-1.96 s with 16 to 2 threads against 0.47-0.62 s and
// 1.22-2.75 s with the GPU (the host's parsing and formatting and CUDA's fixed cost bound it).
// Against a 3.1 Gbp reference's 21.8 GB index, count and locate copy only the rank structures
// and k-mer tables to the card (2.3 GB), and it is ready to search before the CPU has checked the
// file (0.55-0.69 s against 1.0 s): 1 M patterns counted in 0.90-1.16 s against 1.56-1.58 s on the
// CPU's 16 threads, 10 M in 0.99-1.07 s against 3.78 s; 10 M located in 2.58-2.87 s against
// 4.36-4.74 s (2026-11-29); with -b, 2.38-2.49 s against 6.2-7.7 s after the host's share came
// down (twelfth session). Locating 1 M patterns took 2.24 s against 3.02 s already when the card
// was given the whole index; smaller sets were not measured for locate, whose fixed costs are
// count's and the host's check of the suffix arrays, which the CPU's checks include.
func searchDevice(spec, ref string, isIndex bool) string {
	if !isIndex {
		return autoDevice(spec, smallSAInput, ref)
	}
	if spec != "auto" && spec != "" {
		return spec
	}
	if index, _ := regularSize([]string{ref}); index < gpuSearchIndex {
		return "cpu"
	}
	return "auto"
}

// gpuSearchIndex is the size of an index file over which count and locate under auto search it
// on the GPU.
const gpuSearchIndex = 8 << 30

// openSearchIndex opens the backend and the index of -i. An index file is mapped and checked
// while the backend opens (probing for a GPU takes tens of milliseconds); a FASTA file is indexed
// on the backend once it is open. The backend's error comes first, as when one follows the other.
func openSearchIndex(e *env, c *cli.Context, spec string, isIndex bool, threads int, logf func(string, ...any)) (kernels.Backend, *stages.Index, error) {
	path, t := c.String("i"), talkOf(c)
	if !isIndex {
		b, err := openBackend(e, spec, threads, t)
		if err != nil {
			return nil, nil, err
		}
		ix, err := openIndex(e, path, c.Bool("n"), c.IsSet("n"), threads, b, logf)
		if err != nil {
			b.Close()
			return nil, nil, err
		}
		return b, ix, nil
	}
	type opened struct {
		b    kernels.Backend
		note string
		err  error
	}
	done := make(chan opened, 1)
	go func() {
		b, note, err := openBackendNote(e, spec, threads, t, 0)
		done <- opened{b, note, err}
	}()
	// For a device, the pages are checked while they are copied there (SearcherOn); on the CPU
	// they are checked here.
	ix, ixErr := openIndexFile(path, c.Bool("n"), c.IsSet("n"), threads, spec != "cpu", true, logf)
	o := <-done
	if o.err != nil || ixErr != nil {
		if ixErr == nil {
			ix.Close()
		}
		if o.err == nil {
			o.b.Close()
			return nil, nil, ixErr
		}
		return nil, nil, o.err
	}
	if o.note != "" && !t.quiet {
		printNote(e, o.note)
	}
	return o.b, ix, nil
}
