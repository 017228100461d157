#!/usr/bin/env python3
"""Exit 0 when two MUMmer outputs agree up to the order of lines tied on one query position."""
import sys


def canon(path):
    out, run, pos = [], [], None
    with open(path) as f:
        for line in f:
            if line.startswith(">"):
                out.extend(sorted(run))
                run, pos = [], None
                out.append(line)
                continue
            p = line.split()[-2] if len(line.split()) >= 3 else line
            if p != pos:
                out.extend(sorted(run))
                run, pos = [], p
            run.append(line)
    out.extend(sorted(run))
    return out


sys.exit(0 if canon(sys.argv[1]) == canon(sys.argv[2]) else 1)
