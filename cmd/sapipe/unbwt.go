package main

import (
	"context"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/sapipe/sapipe/stages"
)

const unbwtHelp = `Restores the input of "sapipe bwt" from its framed BWT stream, byte for byte, checking every
block against its CRC32C and the stream against its trailer. Damaged, truncated or foreign input
is an error naming the block; with -o nothing is written then, while on stdout the blocks before
the damaged one have been written. FILE "-" or no FILE is stdin.

The inverse transform runs on the CPU, -t blocks at once, whatever --device says (it is accepted
so that one command line serves every stage). Memory: about 6 bytes per byte of each block in
flight.

Examples:
   sapipe unbwt -o genome.fa genome.bwt
   sapipe bwt big.tar | sapipe unbwt | cmp - big.tar`

func unbwtCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:         "unbwt",
		Usage:        "restore the input of sapipe bwt",
		UsageText:    "sapipe unbwt [-o FILE] [FILE|-]",
		Description:  unbwtHelp,
		Flags:        runFlags("blocks inverted at once"),
		OnUsageError: func(_ *cli.Context, err error, _ bool) error { return usageError{err.Error()} },
		Action: func(c *cli.Context) error {
			if err := checkDeviceSpec(c.String("device")); err != nil {
				return err
			}
			if c.Int("t") < 1 {
				return usageError{"-t: want a positive number of threads"}
			}
			path, err := oneInput(c)
			if err != nil {
				return err
			}
			return runUnBWT(c.Context, e, c, path)
		},
	}
}

func runUnBWT(ctx context.Context, e *env, c *cli.Context, path string) error {
	logf := logger(c, e, "unbwt")
	in, name, closeIn, err := inputFile(e, path)
	if err != nil {
		return err
	}
	defer closeIn()
	opts := stages.UnBWTOptions{Threads: c.Int("t")}
	if !c.Bool("q") && e.stderrTerminal {
		opts.Progress = &stages.ByteProgress{W: e.stderr, Label: "sapipe unbwt"}
	}
	out, commit, abort, err := openOutput(c.String("o"), e.stdout)
	if err != nil {
		return err
	}
	t0 := time.Now()
	if err := stages.UnBWT(ctx, opts, name, in, out); err != nil {
		abort()
		return err
	}
	if err := commit(); err != nil {
		return err
	}
	logf("restored %s in %v", name, time.Since(t0).Round(time.Millisecond))
	return nil
}
