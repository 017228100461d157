#!/usr/bin/env python3
"""Where a run's goroutines spent their time, from a Go execution trace (SAPIPE_TRACE=FILE).

    go tool trace -d=parsed FILE | python3 tools/tracesum.py [BIN_SECONDS]

Prints, for each kind of goroutine (named by the function it started in and, where that is a
wrapper such as errgroup's, by the line that started it), the seconds it spent
running, in system calls (cgo and purego calls into the CUDA driver count there), waiting, and
runnable (ready, without a thread to run on), summed over the goroutines of that kind; then the
goroutines running at once, on average, in bins of BIN_SECONDS (default 0.2).
"""
import collections
import re
import signal
import sys

TIME = re.compile(r"Time=(\d+)")
GOID = re.compile(r"GoID=(\d+)")
STATES = re.compile(r" (\w+)->(\w+) ")
WRAPPERS = re.compile(r"(golang\.org/x/sync/errgroup|sync)\.")


def main():
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # `| head` ends it quietly
    bin_ns = float(sys.argv[1]) * 1e9 if len(sys.argv) > 1 else 2e8
    kind = {}  # goroutine -> the function it started in
    since = {}  # goroutine -> (state, when)
    spent = collections.defaultdict(lambda: collections.defaultdict(float))
    running = collections.defaultdict(float)  # bin -> running goroutine-nanoseconds
    created = None  # a goroutine whose start and creator's stack come next
    section = None  # "TransitionStack" (the start) or "Stack" (the creator's) of created
    frame = None  # the last frame read of the creator's stack
    t0 = t_end = None
    for line in sys.stdin:
        if line.startswith("M="):
            created = section = None
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
            if g in since:
                state, start = since[g]
                spent[kind.get(g, "(started before the trace)")][state] += t - start
                if state == "Running":
                    while start < t:
                        b = int((start - t0) // bin_ns)
                        end = min(t, t0 + (b + 1) * bin_ns)
                        running[b] += end - start
                        start = end
            since[g] = (s.group(2), t)
            if s.group(1) == "NotExist":
                created = g
        elif created is not None and line.rstrip() in ("TransitionStack=", "Stack="):
            section = line.rstrip()[:-1]
        elif created is not None and line.startswith("\t") and not line.startswith("\t\t"):
            fn = line.strip().split(" @")[0]
            if section == "TransitionStack" and created not in kind:
                kind[created] = fn
            elif section == "Stack":
                frame = fn
        elif created is not None and section == "Stack" and line.startswith("\t\t") and frame is not None:
            # The creator's first frame outside the wrappers names a wrapper's goroutines.
            if WRAPPERS.match(kind.get(created, "")) and not WRAPPERS.match(frame):
                kind[created] = "%s:%s (%s)" % (frame, line.strip().rsplit(":", 1)[-1], kind[created].rsplit("/", 1)[-1])
                created = section = None
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


if __name__ == "__main__":
    main()
