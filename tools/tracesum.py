#!/usr/bin/env python3
"""Where a run's goroutines spent their time, from a Go execution trace (SAPIPE_TRACE=FILE).

    go tool trace -d=parsed FILE | python3 tools/tracesum.py [BIN_SECONDS [WHY]]

Prints, for each kind of goroutine (named by the function it started in and, where that is a
wrapper such as errgroup's, by the line that started it), the seconds it spent
running, in system calls (cgo and purego calls into the CUDA driver count there), waiting, and
runnable (ready, without a thread to run on), summed over the goroutines of that kind; then the
goroutines running at once, on average, in bins of BIN_SECONDS (default 0.2). With WHY (a
regular expression), the kinds it matches also have their waiting and system calls split by
where they were made: the first frame outside the runtime, sync and errgroup, with its line.
With TIMELINE=1 in the environment, each bin also lists the kinds that ran or were in system
calls in it, most first (where a run's serial stretches are, and whose they are).
"""
import collections
import os
import re
import signal
import sys

TIME = re.compile(r"Time=(\d+)")
GOID = re.compile(r"GoID=(\d+)")
STATES = re.compile(r" (\w+)->(\w+) ")
WRAPPERS = re.compile(r"(golang\.org/x/sync/errgroup|sync)\.")
# Frames that say how a goroutine waits rather than why.
PLUMBING = re.compile(r"(runtime|internal/\w+|sync|sync/atomic|golang\.org/x/sync/errgroup|syscall|time|os|"
                      r"github\.com/ebitengine/purego)[./]")


def main():
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # `| head` ends it quietly
    bin_ns = float(sys.argv[1]) * 1e9 if len(sys.argv) > 1 else 2e8
    why = re.compile(sys.argv[2]) if len(sys.argv) > 2 else None
    kind = {}  # goroutine -> the function it started in
    since = {}  # goroutine -> (state, when, where it went into that state)
    spent = collections.defaultdict(lambda: collections.defaultdict(float))
    sites = collections.defaultdict(lambda: collections.defaultdict(float))  # (kind, state) -> site -> ns
    running = collections.defaultdict(float)  # bin -> running goroutine-nanoseconds
    timeline = os.environ.get("TIMELINE") == "1"
    busy = collections.defaultdict(lambda: collections.defaultdict(float))  # bin -> kind -> ns
    created = None  # a goroutine whose start and creator's stack come next
    moved = None  # a goroutine that went into Waiting or Syscall, whose transition stack comes next
    section = None  # "TransitionStack" or "Stack" of the event being read
    frame = None  # the last frame read
    t0 = t_end = None
    for line in sys.stdin:
        if line.startswith("M="):
            created = moved = section = None
            m = TIME.search(line)
            if not m:
                continue
            t = int(m.group(1))
            t0 = t if t0 is None else t0
            t_end = t
            if "StateTransition" not in line or "GoID=" not in line:
                continue
            s = STATES.search(line)
            if not s:
                continue
            g = int(GOID.search(line).group(1))
            k = kind.get(g, "(started before the trace)")
            if g in since:
                state, start, site = since[g]
                spent[k][state] += t - start
                if site is not None:
                    sites[(k, state)][site] += t - start
                if state in ("Running", "Syscall"):
                    while start < t:
                        b = int((start - t0) // bin_ns)
                        end = min(t, t0 + (b + 1) * bin_ns)
                        if state == "Running":
                            running[b] += end - start
                        if timeline:
                            busy[b][k if state == "Running" else k + " (syscall)"] += end - start
                        start = end
            since[g] = (s.group(2), t, None)
            if s.group(1) == "NotExist":
                created = g
            elif why is not None and s.group(2) in ("Waiting", "Syscall") and why.search(k):
                moved = g
        elif line.rstrip() in ("TransitionStack=", "Stack="):
            section = line.rstrip()[:-1]
            frame = None
        elif line.startswith("\t") and not line.startswith("\t\t"):
            fn = line.strip().split(" @")[0]
            frame = fn
            if created is not None and section == "TransitionStack" and created not in kind:
                kind[created] = fn
        elif line.startswith("\t\t") and frame is not None:
            at = line.strip().rsplit(":", 1)[-1]
            if created is not None and section == "Stack":
                # The creator's first frame outside the wrappers names a wrapper's goroutines.
                if WRAPPERS.match(kind.get(created, "")) and not WRAPPERS.match(frame):
                    kind[created] = "%s:%s (%s)" % (frame, at, kind[created].rsplit("/", 1)[-1])
                    created = None
            elif moved is not None and section == "TransitionStack" and not PLUMBING.match(frame):
                state, start, _ = since[moved]
                since[moved] = (state, start, "%s:%s" % (frame, at))
                moved = None
            frame = None
    if t0 is None:
        sys.exit("no events: pipe in the output of go tool trace -d=parsed")
    print("trace of %.2f s" % ((t_end - t0) / 1e9))
    print("%-72s %9s %9s %9s %9s" % ("started in", "running", "syscall", "waiting", "runnable"))
    rows = sorted(spent.items(), key=lambda kv: -kv[1].get("Running", 0))
    for name, d in rows:
        print("%-72s %9.2f %9.2f %9.2f %9.2f" % (name[-72:], d.get("Running", 0) / 1e9, d.get("Syscall", 0) / 1e9,
                                                 d.get("Waiting", 0) / 1e9, d.get("Runnable", 0) / 1e9))
    print("running at once, bins of %g s:" % (bin_ns / 1e9))
    print(" ".join("%.1f" % (running[b] / bin_ns) for b in range(int((t_end - t0) // bin_ns) + 1)))
    if timeline:
        for b in range(int((t_end - t0) // bin_ns) + 1):
            top = sorted(busy[b].items(), key=lambda kv: -kv[1])[:4]
            print("%7.3f s  %s" % (b * bin_ns / 1e9, "; ".join("%.1f %s" % (ns / bin_ns, name.rsplit("/", 1)[-1][-60:]) for name, ns in top)))
    for (k, state), by in sorted(sites.items()):
        print("%s, %s, by where:" % (k, state.lower()))
        for site, ns in sorted(by.items(), key=lambda kv: -kv[1])[:8]:
            print("  %9.2f  %s" % (ns / 1e9, site[-100:]))


if __name__ == "__main__":
    main()
