package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/sapipe/sapipe/kernels/device"
)

// commit is set at link time by the Makefile (-X main.commit=...), like version.
var commit = ""

// buildVersion returns the version and commit of this binary: those the Makefile linked in, or
// else what the Go toolchain recorded (the module version under `go install ...@vX`, and the VCS
// revision of a build inside a git checkout).
func buildVersion() (ver, rev string) {
	ver, rev = version, commit
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return ver, rev
	}
	if ver == "dev" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		ver = bi.Main.Version
	}
	if rev == "" {
		modified := false
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
		if len(rev) > 12 {
			rev = rev[:12]
		}
		if rev != "" && modified {
			rev += "-dirty"
		}
	}
	if rev == "" {
		rev = "unknown"
	}
	return ver, rev
}

// printVersion is `sapipe --version`: the first line is "sapipe VERSION" (what workflow engines
// parse for their version records), then the commit, the Go toolchain and platform, and whether a
// GPU is usable, found the way --device auto finds one.
func printVersion(c *cli.Context) {
	writeVersion(c.App.Writer)
}

func writeVersion(w io.Writer) {
	ver, rev := buildVersion()
	fmt.Fprintf(w, "sapipe %s\ncommit %s\nbuilt with %s for %s/%s\n", ver, rev, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	// A host without any CUDA driver gets the plain "gpu: none"; a driver that is there but
	// fails says why, on the same line.
	b, note, err := device.Open("auto", device.Options{Threads: 1})
	switch {
	case err != nil:
		fmt.Fprintf(w, "gpu: none (%s)\n", oneLine(err.Error()))
	case note != "":
		fmt.Fprintf(w, "gpu: none (%s)\n", oneLine(strings.TrimPrefix(note, "using the CPU: ")))
	case b.Name() == "cpu":
		fmt.Fprintln(w, "gpu: none")
	default:
		fmt.Fprintf(w, "gpu: %s\n", b.Name())
	}
	if b != nil {
		b.Close()
	}
}
