package main

import "github.com/urfave/cli/v2"

const locateHelp = `Prints every exact occurrence of each pattern in an indexed reference, found by FM-index
backward search: one tab-separated line per occurrence, in the patterns' input order,

   pattern-name  sequence-name  position  strand

where position is the 1-based position, on the reference sequence's forward strand, of the
occurrence's leftmost base, and strand is + for the pattern itself and - for its reverse
complement (-b or -r). A pattern's occurrences are listed + first, each strand by ascending
position in the reference file (sequence order, then position); a pattern that does not occur
prints nothing. There is no header line.

Patterns and -i are as for "sapipe count" (see sapipe count --help). Occurrences are held in
memory a batch at a time: a very short pattern against a large genome can have millions.

Examples:
   sapipe locate -i ecoli.sai primers.fa
   sapipe locate -b -i ecoli.sai -o hits.tsv reads.fq.gz`

func locateCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:         "locate",
		Usage:        "every exact occurrence of each pattern in an indexed reference",
		UsageText:    "sapipe locate -i INDEX [-b|-r] [-o FILE] [patterns-file...|-]",
		Description:  locateHelp,
		Flags:        searchFlags(),
		OnUsageError: func(_ *cli.Context, err error, _ bool) error { return usageError{err.Error()} },
		Action:       func(c *cli.Context) error { return runSearchCommand(c, e, "locate", true) },
	}
}
