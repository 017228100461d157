"""Snakemake wrapper for sapipe: one wrapper for every sapipe step.

The rule names the step in params.command; the wrapper builds the sapipe command line from the
rule's input, output, threads and params, writes it to the rule's log, and runs it. The command
lines are the ones the Nextflow modules in workflows/nextflow/modules/sapipe run (the workflow
test checks that they agree).

    command   input                         output                 params
    split     reads (one file)              the shards, in order   template: the -o template
                                                                   whose expansions are the
                                                                   outputs (e.g. shards/s.%04d.fa.gz)
    mummer    ref (FASTA) or index (.sai),  one file               device: auto, cpu, gpu or gpu:N
              reads (one or more)
    merge     the parts, in order           one file
    index     ref                           one file
    compress  one file                      one file

Every step takes params.extra (more options, a string, placed right after the subcommand).
The sapipe executable is config["sapipe"], or sapipe on PATH. Adding a step is adding one
function to STEPS.
"""

import shlex

from snakemake.shell import shell


def _named(nl, key, default=None):
    """The item key of a Snakemake named list (input, params), or default."""
    return getattr(nl, key) if key in nl.keys() else default


def _files(x):
    """A named input as a list of names (a single file is a str)."""
    return [x] if isinstance(x, str) else [str(f) for f in x]


def _split(sm):
    template = sm.params.template
    outputs = [str(o) for o in sm.output]
    want = [template % i for i in range(len(outputs))]
    if outputs != want:
        raise ValueError(
            "sapipe split: the outputs must be the template's expansions %s, in order; got %s"
            % (want, outputs)
        )
    return ["split", "-n", len(outputs), "-t", sm.threads, "-o", template, *_files(sm.input.reads)], None


def _mummer(sm):
    device = _named(sm.params, "device", "auto")
    index = _named(sm.input, "index")
    ref = ["--index", index] if index else [sm.input.ref]
    return ["mummer", "--device", device, "-t", sm.threads, "-o", sm.output[0], *ref, *_files(sm.input.reads)], None


def _merge(sm):
    return ["merge", "-o", sm.output[0], *sm.input], None


def _index(sm):
    # An index made with -n serves only mummer runs with -n: give the rule mummer's -n in extra.
    return ["index", "-t", sm.threads, "-o", sm.output[0], sm.input.ref], None


def _compress(sm):
    # bzip2-like: -c writes the compressed stream to stdout.
    return ["compress", "-p", sm.threads, "-c", sm.input[0]], str(sm.output[0])


STEPS = {"split": _split, "mummer": _mummer, "merge": _merge, "index": _index, "compress": _compress}


def command_line(sm):
    """Return the shell command line of the step (without logging)."""
    step = _named(sm.params, "command")
    if step not in STEPS:
        raise ValueError("sapipe wrapper: params.command must be one of %s, not %r" % (sorted(STEPS), step))
    args, stdout = STEPS[step](sm)
    sapipe = sm.config.get("sapipe", "sapipe")
    extra = shlex.split(_named(sm.params, "extra", "") or "")
    words = [sapipe, args[0], *extra, *(str(a) for a in args[1:])]
    line = " ".join(shlex.quote(w) for w in words)
    if stdout is not None:
        line += " > " + shlex.quote(stdout)
    return line


def main(sm):
    line = command_line(sm)
    log = [str(f) for f in sm.log]
    if log:
        with open(log[0], "w") as f:
            f.write("+ " + line + "\n")
        shell(line + " 2>> " + shlex.quote(log[0]))
    else:
        shell(line)


if "snakemake" in globals():  # run by Snakemake, which sets it; imported by the tests otherwise
    main(snakemake)  # noqa: F821
