// Command sapipe is a streaming tool for exact sequence matching and BWT compression. Each
// subcommand (one file each in this folder) builds a pipeline from the stages package and runs it;
// no algorithm lives here.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"runtime/pprof"
	"runtime/trace"
	"syscall"
	"time"

	"github.com/sapipe/sapipe/kernels/cuda"
	"github.com/urfave/cli/v2"
	"golang.org/x/term"
)

// version is set at link time by the Makefile.
var version = "dev"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	// SAPIPE_CPUPROFILE=FILE writes a Go CPU profile of the run, for `go tool pprof`.
	if path := os.Getenv("SAPIPE_CPUPROFILE"); path != "" {
		if f, err := os.Create(path); err == nil && pprof.StartCPUProfile(f) == nil {
			defer f.Close()
			defer pprof.StopCPUProfile()
		}
	}
	// SAPIPE_TRACE=FILE writes a Go execution trace of the run, for `go tool trace` (where the
	// goroutines wait: -pprof=sync, -pprof=sched).
	if path := os.Getenv("SAPIPE_TRACE"); path != "" {
		if f, err := os.Create(path); err == nil && trace.Start(f) == nil {
			defer f.Close()
			defer trace.Stop()
		}
	}
	if l := softMemoryLimit(memoryLimit(), os.Getenv("GOMEMLIMIT")); l > 0 {
		debug.SetMemoryLimit(l)
	}
	t0 := time.Now()
	code := run(ctx, os.Args, os.Stdin, os.Stdout, os.Stderr)
	stop()
	cuda.Trace("command run; exiting", t0)
	// SAPIPE_MEMPROFILE=FILE writes a Go heap profile at the end of the run (what is still held,
	// and with -sample_index=alloc_space what was allocated), for `go tool pprof`.
	if path := os.Getenv("SAPIPE_MEMPROFILE"); path != "" {
		if f, err := os.Create(path); err == nil {
			pprof.Lookup("heap").WriteTo(f, 0)
			f.Close()
		}
	}
	if code != 0 || os.Getenv("SAPIPE_CPUPROFILE") == "" && os.Getenv("SAPIPE_TRACE") == "" {
		os.Exit(code)
	}
}

// env is what a subcommand may touch of the outside world; tests substitute it.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	// stderrTerminal says whether progress may be drawn on stderr.
	stderrTerminal bool
}

// usageError marks errors in the command line, as opposed to errors while running.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

// run executes the command line args (args[0] is the program name) and returns the exit status.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	e := &env{stdin: stdin, stdout: stdout, stderr: stderr, stderrTerminal: isTerminal(stderr)}
	app := newApp(ctx, e)
	err := app.RunContext(ctx, args)
	removals.Wait()
	return exitStatus(err, stderr)
}

// exitStatus prints err as one line and maps it to an exit status. A closed stdout is not an
// error worth a word: the reader went away on purpose (`| head`).
func exitStatus(err error, stderr io.Writer) int {
	switch {
	case err == nil:
		return 0
	case errors.Is(err, syscall.EPIPE):
		return 141 // what a shell reports for a process ended by SIGPIPE
	case errors.Is(err, context.Canceled):
		fmt.Fprintln(stderr, "sapipe: interrupted")
		return 130
	}
	fmt.Fprintf(stderr, "sapipe: %s\n", oneLine(err.Error()))
	return 1
}

func oneLine(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c == '\n' || c == '\r' {
			b[i] = ' '
		}
	}
	return string(b)
}

func newApp(ctx context.Context, e *env) *cli.App {
	cli.VersionFlag = &cli.BoolFlag{Name: "version", Usage: "print the version"}
	cli.VersionPrinter = printVersion
	app := &cli.App{
		Name:                   "sapipe",
		Usage:                  "exact sequence matching and BWT compression, on the GPU when there is one",
		Version:                version,
		Reader:                 e.stdin,
		Writer:                 e.stdout,
		ErrWriter:              e.stderr,
		HideHelpCommand:        true,
		UseShortOptionHandling: false,
		ExitErrHandler:         func(*cli.Context, error) {},
		OnUsageError: func(_ *cli.Context, err error, _ bool) error {
			return usageError{err.Error()}
		},
		Commands: []*cli.Command{
			mummerCommand(e),
			saCommand(e),
			bwtCommand(e),
			unbwtCommand(e),
			devicesCommand(e),
			splitCommand(e),
			mergeCommand(e),
			indexCommand(e),
			countCommand(e),
			locateCommand(e),
			compressCommand(e),
			decompressCommand(e),
		},
	}
	// No command has subcommands: without this, cli gives each a "help" (and "h") subcommand, so
	// that a first argument of that name (a file called h) asked for help instead.
	for _, c := range app.Commands {
		c.HideHelpCommand = true
	}
	return app
}

// isTerminal reports whether w is a terminal.
func isTerminal(w any) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd())) // a terminal, not any character device (/dev/null)
}
