package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"
)

const usage = `genscale writes large test inputs for sapipe, deterministically from a seed: the same
arguments give the same bytes on any machine and with any number of threads.

Usage:
  genscale genome  [options]   a human-like genome (FASTA)
  genscale diverge [options]   a diverged copy of a genome, or of its first bases (FASTA)
  genscale reads   [options]   reads sampled from a genome with sequencing errors (FASTQ/FASTA)

"genscale COMMAND -h" lists a command's options. Sizes and counts take decimal suffixes:
k (10^3), M (10^6), G (10^9), T (10^12), e.g. 3.1G, 150M, 10M. "-o -" (the default) is stdout;
a file is written under a temporary name and renamed when complete.

Examples:
  genscale genome --size 3.1G --seed 1 -o hs.fa
  genscale diverge -i hs.fa --length 150M --rate 0.01 --seed 2 -o hs150_div.fa --ref-out hs150.fa
  genscale reads -i hs.fa --n 10M --len 150 --seed 3 -o reads.fq
  genscale reads -i hs.fa --n 10M --len 20:150 --error 0 --n-rate 0 --format lines -o patterns.txt
`

func main() {
	if len(os.Args) < 2 {
		fmt.Fprint(os.Stderr, usage)
		os.Exit(2)
	}
	var err error
	switch cmd, args := os.Args[1], os.Args[2:]; cmd {
	case "genome":
		err = genomeCmd(args)
	case "diverge":
		err = divergeCmd(args)
	case "reads":
		err = readsCmd(args)
	case "-h", "-help", "--help", "help":
		fmt.Print(usage)
		return
	default:
		fmt.Fprintf(os.Stderr, "genscale: unknown command %q\n\n%s", cmd, usage)
		os.Exit(2)
	}
	var ue usageError
	switch {
	case err == nil:
	case errors.Is(err, flag.ErrHelp):
	case errors.As(err, &ue):
		fmt.Fprintf(os.Stderr, "genscale: %v (genscale %s -h for help)\n", err, os.Args[1])
		os.Exit(2)
	default:
		fmt.Fprintf(os.Stderr, "genscale: %v\n", err)
		os.Exit(1)
	}
}

type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

// sizeValue is a flag holding a count with an optional decimal suffix (k, M, G, T; "bp" or "b"
// may follow).
type sizeValue int

func (v *sizeValue) String() string { return strconv.Itoa(int(*v)) }

func (v *sizeValue) Set(s string) error {
	n, err := parseSize(s)
	if err != nil {
		return err
	}
	*v = sizeValue(n)
	return nil
}

func parseSize(s string) (int, error) {
	t := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSpace(s), "p"), "b")
	t = strings.TrimSuffix(t, "B")
	mult := 1.0
	if t != "" {
		switch t[len(t)-1] {
		case 'k', 'K':
			mult = 1e3
		case 'm', 'M':
			mult = 1e6
		case 'g', 'G':
			mult = 1e9
		case 't', 'T':
			mult = 1e12
		}
		if mult != 1 {
			t = t[:len(t)-1]
		}
	}
	f, err := strconv.ParseFloat(t, 64)
	if err != nil || f < 0 || math.IsNaN(f) || f*mult > 1<<50 {
		return 0, fmt.Errorf("bad size %q (want e.g. 3.1G, 150M, 10k, 5000)", s)
	}
	return int(math.Round(f * mult)), nil
}

// newFlags makes a command's flag set, with the options every command has.
func newFlags(name, synopsis string) (fs *flag.FlagSet, out *string, threads *int, verbose *bool) {
	fs = flag.NewFlagSet(name, flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "%s\n\nOptions (one dash or two):\n", synopsis)
		fs.PrintDefaults()
	}
	out = fs.String("o", "-", "output file (- is stdout)")
	threads = fs.Int("t", runtime.GOMAXPROCS(0), "threads (the output does not depend on them)")
	verbose = fs.Bool("v", false, "timings on stderr")
	return
}

func parseFlags(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usageError{err.Error()}
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Sprintf("unexpected argument %q", fs.Arg(0))}
	}
	return nil
}

// output opens path for writing ("-" is stdout): a file is written under a temporary name in
// the same folder and renamed by commit, so that an interrupted run leaves no partial file that
// could pass for a complete one.
func output(path string) (w io.Writer, commit func() error, abort func(), err error) {
	if path == "-" || path == "" {
		return os.Stdout, func() error { return nil }, func() {}, nil
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return nil, nil, nil, err
	}
	abort = func() { f.Close(); os.Remove(f.Name()) }
	commit = func() error {
		if err := f.Close(); err != nil {
			os.Remove(f.Name())
			return fmt.Errorf("writing %s: %w", path, err)
		}
		if err := os.Chmod(f.Name(), 0o644); err != nil {
			os.Remove(f.Name())
			return err
		}
		return os.Rename(f.Name(), path)
	}
	return f, commit, abort, nil
}

// writeOutput writes to path through fn, committing only when fn succeeds.
func writeOutput(path string, fn func(w io.Writer) error) error {
	w, commit, abort, err := output(path)
	if err != nil {
		return err
	}
	if err := fn(w); err != nil {
		abort()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return commit()
}

// timer prints the time of each step on stderr with -v.
type timer struct {
	on    bool
	start time.Time
}

func (t *timer) step(format string, args ...any) {
	if t.on {
		fmt.Fprintf(os.Stderr, "genscale: %.2fs %s\n", time.Since(t.start).Seconds(), fmt.Sprintf(format, args...))
	}
}

func genomeCmd(args []string) error {
	spec := defaultGenomeSpec()
	fs, out, threads, verbose := newFlags("genome", "genscale genome [--size 3.1G] [--record-size 250M] [--seed S] [-o FILE] ...")
	size, recordSize := sizeValue(spec.size), sizeValue(spec.recordSize)
	fs.Var(&size, "size", "total bases")
	fs.Var(&recordSize, "record-size", "bases a record (the last one is shorter)")
	width := fs.Int("line", 60, "bases a line")
	fs.StringVar(&spec.prefix, "prefix", spec.prefix, "record names: PREFIX1, PREFIX2, ...")
	fs.Uint64Var(&spec.seed, "seed", spec.seed, "random seed")
	fs.Float64Var(&spec.gc, "gc", spec.gc, "mean GC fraction of the background")
	fs.Float64Var(&spec.gcSpread, "gc-spread", spec.gcSpread, "GC of each 256 kbp isochore: the mean give or take this")
	fs.Float64Var(&spec.nFrac, "n-frac", spec.nFrac, "fraction of bases in runs of N")
	fs.Float64Var(&spec.repeats, "repeats", spec.repeats, "fraction in interspersed repeat copies (SINE/LINE/LTR/DNA-like)")
	fs.Float64Var(&spec.tandem, "tandem", spec.tandem, "fraction in tandem repeats (micro- and satellites)")
	fs.Float64Var(&spec.segdup, "segdup", spec.segdup, "fraction covered by segmental duplications")
	fs.Float64Var(&spec.softmask, "softmask", spec.softmask, "probability that a repeat copy is lowercase (0: all uppercase)")
	fs.IntVar(&spec.families, "families", spec.families, "interspersed repeat families")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	spec.size, spec.recordSize, spec.threads = int(size), int(recordSize), max(1, *threads)
	if *width < 1 {
		return usageError{fmt.Sprintf("--line %d: want at least 1", *width)}
	}
	if err := spec.check(); err != nil {
		return usageError{err.Error()}
	}
	t := timer{*verbose, time.Now()}
	g := newGenerator(spec)
	g.generate()
	t.step("generated %d bases", spec.size)
	err := writeOutput(*out, func(w io.Writer) error { return g.writeFasta(w, *width) })
	t.step("wrote %s", *out)
	return err
}
