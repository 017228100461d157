package main

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/sapipe/sapipe/kernels"
	"github.com/sapipe/sapipe/stages"
)

const indexHelp = `Indexes a reference once for later runs: encodes its records (FASTA or FASTQ, plain or
compressed, "-" is stdin) and writes one file holding the names and offsets of the sequences, the
encoded text, its suffix array, the rank structure of its BWT and its LCP array, each section
checksummed. "sapipe mummer --index", "sapipe count" and "sapipe locate" map the file into memory
and start at once instead of building anything; a damaged, truncated, foreign or wrong-version
file is refused with an error. On a GPU (--device) each page's whole index is built there, in
pages sized to the card (about 15 bytes a base of device memory for DNA), or to --gpu-memory on a
card shared with other work; on the CPU, on every thread. The file is the same. The file takes
about 12.5 bytes a base up to 2^27 bases, about 6.6 over that (the keys of the fastest count and
locate are left out there).

A reference of any length is indexed: one longer than 2^31-3 bases (or than --page-size, or than
a GPU sorts at once) is cut into pages, each a window of the text that runs --overlap bases past
what the page owns, so that an occurrence of up to --overlap+1 bases lies in one window. Against
an index of several pages, "sapipe mummer -l" can be at most --overlap+1, and count and locate
check patterns longer than that against the text. Output never depends on the pages.

-n encodes the reference as "sapipe mummer -n" does (only a, c, g, t match); an index built with
-n serves only runs with -n, and one built without it only runs without it.

Without -o the index is written beside the reference as REFERENCE.sai.

Examples:
   sapipe index -o ecoli.sai ecoli.fa.gz
   sapipe index ecoli.fa -o ecoli.sai
   sapipe index --device gpu --gpu-memory 8G -o hs.sai hs.fa
   sapipe mummer --index ecoli.sai -maxmatch -l 20 -b reads.fq.gz > hits.mums`

func indexCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:        "index",
		Usage:       "persistent index of a reference for mummer, count and locate",
		UsageText:   "sapipe index [-n] [-o FILE] [--page-size N] [--overlap N] [--gpu-memory SIZE] [--device D] [-t N] <reference-file>",
		Description: indexHelp,
		Flags: append([]cli.Flag{
			&cli.BoolFlag{Name: "n", Usage: "match only a, c, g, t (as sapipe mummer -n)"},
			&cli.IntFlag{Name: "page-size", Usage: "most bases a page owns (0: as many as fit one page or the device)"},
			&cli.IntFlag{Name: "overlap", Value: stages.DefaultIndexOverlap, Usage: "bases each page's window runs past what the page owns"},
			&cli.StringFlag{Name: "gpu-memory", Usage: "most device memory a page's build takes on each GPU (`SIZE`, k, M, G suffixes; default: what the card has free); pages are sized to it"},
		}, runFlags("host threads (checksums; suffix array on the CPU)")...),
		OnUsageError: func(_ *cli.Context, err error, _ bool) error { return usageError{err.Error()} },
		Action: func(c *cli.Context) error {
			args, err := interspersed(c)
			if err != nil {
				return err
			}
			if len(args) != 1 {
				return usageError{fmt.Sprintf("want one reference file, got %d: %q", len(args), args)}
			}
			return runIndex(c.Context, e, c, args[0])
		},
	}
}

func runIndex(ctx context.Context, e *env, c *cli.Context, ref string) error {
	logf := logger(c, e, "index")
	out := c.String("o")
	if out == "" {
		if ref == "-" {
			return usageError{"-o is needed when the reference is stdin"}
		}
		out = ref + ".sai"
	}
	threads := c.Int("t")
	if c.Int("page-size") < 0 || c.Int("overlap") < 0 {
		return usageError{"--page-size and --overlap must not be negative"}
	}
	limit, err := gpuMemoryFlag(c)
	if err != nil {
		return err
	}
	b, err := openBackendLimit(e, autoDevice(c.String("device"), smallSAInput, ref), threads, talkOf(c), limit)
	if err != nil {
		return err
	}
	defer b.Close()
	t0 := time.Now()
	refData, err := stages.LoadReference(ref, c.Bool("n"), e.stdin)
	if err != nil {
		return err
	}
	logf("read %s: %d records, %d bases in %v", ref, len(refData.Names), len(refData.Text), time.Since(t0).Round(time.Millisecond))
	if err := ctx.Err(); err != nil {
		return err
	}
	t1 := time.Now()
	ix, err := stages.IndexReference(b, refData, c.Bool("n"), ref, stages.IndexOptions{PageSize: c.Int("page-size"), Overlap: c.Int("overlap"), Threads: threads, Log: logf})
	if err != nil {
		return err
	}
	logf("indexed on %s in %v (%d pages)", b.Name(), time.Since(t1).Round(time.Millisecond), len(ix.Pages))
	if pm, ok := b.(interface{ PeakMemory() int64 }); ok && len(ix.Pages) > 0 {
		widest := 0
		for _, p := range ix.Pages {
			widest = max(widest, p.WinEnd-p.Start)
		}
		peak := pm.PeakMemory()
		logf("device memory at most %d MiB at once: %.1f bytes a base of the widest page", peak>>20, float64(peak)/float64(widest))
	}
	w, commit, abort, err := openOutput(out, e.stdout)
	if err != nil {
		return err
	}
	t2 := time.Now()
	nflag := ""
	if c.Bool("n") {
		nflag = " -n"
	}
	note := fmt.Sprintf("sapipe %s: sapipe index%s %s (%d records, %d codes)\n", version, nflag, filepath.Base(ref), len(refData.Names), len(refData.Text))
	if err := ix.Write(w, note, threads); err != nil {
		abort()
		return fmt.Errorf("writing %s: %w", out, err)
	}
	if err := commit(); err != nil {
		return err
	}
	logf("wrote %s in %v", out, time.Since(t2).Round(time.Millisecond))
	return nil
}

// openIndex loads the index at path for count or locate, for a run that needs nucleotidesOnly
// (-n given, or not), checking it on threads goroutines (all but the LCP, which searches never
// read). With a backend b, a FASTA file (anything that is not an
// index file) is indexed in memory instead, its suffix array on b.
func openIndex(e *env, path string, nucleotidesOnly, nSet bool, threads int, b kernels.Backend, logf func(string, ...any)) (*stages.Index, error) {
	t0 := time.Now()
	if b != nil && !stages.IsIndexFile(path) {
		ix, err := stages.BuildIndex(b, path, nucleotidesOnly, e.stdin, stages.IndexOptions{Overlap: stages.DefaultIndexOverlap, Threads: threads})
		if err != nil {
			return nil, err
		}
		logf("indexed %s (not an index file) on %s in %v", path, b.Name(), time.Since(t0).Round(time.Millisecond))
		runtime.GC()
		return ix, nil
	}
	return openIndexFile(path, nucleotidesOnly, nSet, threads, false, true, logf)
}

// openIndexFile maps the index file at path and checks it, or with checking leaves its pages'
// checks running (stages.OpenIndexChecking: for a device, which copies the arrays meanwhile);
// with search, for count and locate, which never read the LCP (stages.OpenSearchIndex).
func openIndexFile(path string, nucleotidesOnly, nSet bool, threads int, checking, search bool, logf func(string, ...any)) (*stages.Index, error) {
	t0 := time.Now()
	open := stages.OpenIndex
	switch {
	case checking && search:
		open = stages.OpenSearchIndexChecking
	case checking:
		open = stages.OpenIndexChecking
	case search:
		open = stages.OpenSearchIndex
	}
	ix, err := open(path, threads)
	if err != nil {
		return nil, err
	}
	if err := checkIndexN(ix, path, nucleotidesOnly, nSet); err != nil {
		return nil, err
	}
	how := "read"
	if ix.File.Mapped {
		how = "mapped"
	}
	what := fmt.Sprintf("%s index %s (%d records, %d bases, %d bytes)", how, path, len(ix.Ref.Names), len(ix.Ref.Text), ix.File.Size)
	if took := time.Since(t0).Round(time.Microsecond); checking {
		logf("%s in %v; checking its pages", what, took)
	} else {
		logf("%s and checked it in %v", what, took)
	}
	return ix, nil
}

// logChecks logs how long the checks of an index left checking took (nothing for another).
func logChecks(ix *stages.Index, logf func(string, ...any)) {
	switch d, sums := ix.CheckTime(); {
	case d > 0:
		logf("checked the index's pages in %v (checksums %v)", d.Round(time.Microsecond), sums.Round(time.Microsecond))
	case sums > 0:
		logf("checked the index's checksums in %v, its pages on the device", sums.Round(time.Microsecond))
	}
}

// checkIndexN refuses an index built with -n for a run without it, and the other way round (nSet:
// the run gave or left out -n on purpose), closing it.
func checkIndexN(ix *stages.Index, path string, nucleotidesOnly, nSet bool) error {
	if nSet && ix.NucleotidesOnly != nucleotidesOnly {
		ix.Close()
		if ix.NucleotidesOnly {
			return usageError{fmt.Sprintf("%s was built with -n (only a, c, g, t match): give -n, or index the reference without it", path)}
		}
		return usageError{fmt.Sprintf("%s was built without -n: leave -n out, or index the reference with sapipe index -n", path)}
	}
	return nil
}

// interspersed returns the arguments of c that are not options, setting the options that follow
// the first argument (`sapipe index ref.fa -o ref.sai`), which the flag package leaves among the
// arguments. "--" ends the options.
func interspersed(c *cli.Context) ([]string, error) {
	var args []string
	in := c.Args().Slice()
	for i := 0; i < len(in); i++ {
		a := in[i]
		if a == "--" {
			return append(args, in[i+1:]...), nil
		}
		if len(a) < 2 || a[0] != '-' {
			args = append(args, a)
			continue
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		f := lookupFlag(c.Command.Flags, name)
		if f == nil {
			return nil, usageError{fmt.Sprintf("flag provided but not defined: -%s", name)}
		}
		if _, isBool := f.(*cli.BoolFlag); isBool {
			if !hasValue {
				value = "true"
			}
		} else if !hasValue {
			if i+1 == len(in) {
				return nil, usageError{fmt.Sprintf("flag needs an argument: -%s", name)}
			}
			i++
			value = in[i]
		}
		if err := c.Set(name, value); err != nil {
			return nil, usageError{fmt.Sprintf("invalid value %q for flag -%s: %v", value, name, err)}
		}
	}
	return args, nil
}

// lookupFlag returns the flag of flags that has name among its names.
func lookupFlag(flags []cli.Flag, name string) cli.Flag {
	for _, f := range flags {
		for _, n := range f.Names() {
			if n == name {
				return f
			}
		}
	}
	return nil
}
