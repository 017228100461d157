"""Tests of the wrapper's command lines, without Snakemake running anything: every step, with
and without its options, as the example Snakefile's rules give them. Run: python3 test_wrapper.py
(workflows/test.sh runs it with Snakemake's python)."""

import os
import sys
import unittest

from snakemake.io import Namedlist

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import wrapper  # noqa: E402


def named(positional=(), **kw):
    nl = Namedlist(list(positional))
    for k, v in kw.items():
        nl.append(v)
        nl._set_name(k, len(nl) - 1)
    return nl


class Job:
    def __init__(self, input, output, params, threads=2, config=None):
        self.input, self.output, self.params = input, output, params
        self.threads, self.config, self.log = threads, config or {}, Namedlist([])


class TestCommandLines(unittest.TestCase):
    def test_split(self):
        job = Job(named(reads="in/r.fq.gz"), named([f"shards/s.{i:04d}.fq.gz" for i in range(3)]),
                  named(command="split", template="shards/s.%04d.fq.gz"))
        self.assertEqual(wrapper.command_line(job), "sapipe split -n 3 -t 2 -o shards/s.%04d.fq.gz in/r.fq.gz")
        job.output = named(["shards/s.0000.fq.gz", "shards/s.0002.fq.gz"])
        with self.assertRaises(ValueError):
            wrapper.command_line(job)

    def test_mummer(self):
        job = Job(named(reads="shards/s.0001.fa.gz", ref="ref.fa"), named(["mums/s.0001.mums"]),
                  named(command="mummer", extra="-maxmatch -l 20 -b -c", device="gpu"), threads=8,
                  config={"sapipe": "/opt/sapipe/bin/sapipe"})
        self.assertEqual(wrapper.command_line(job),
                         "/opt/sapipe/bin/sapipe mummer -maxmatch -l 20 -b -c --device gpu -t 8 -o mums/s.0001.mums ref.fa shards/s.0001.fa.gz")
        job.input = named(reads=["a.fq", "b.fq"], index="index/ref.sai")
        job.params, job.config = named(command="mummer"), {}
        self.assertEqual(wrapper.command_line(job), "sapipe mummer --device auto -t 8 -o mums/s.0001.mums --index index/ref.sai a.fq b.fq")

    def test_merge_index_compress(self):
        parts = [f"mums/s.{i:04d}.mums" for i in range(2)]
        self.assertEqual(wrapper.command_line(Job(named(parts), named(["results/s.mums"]), named(command="merge"))),
                         "sapipe merge -o results/s.mums mums/s.0000.mums mums/s.0001.mums")
        self.assertEqual(wrapper.command_line(Job(named(ref="my ref.fa"), named(["index/reference.sai"]), named(command="index", extra="-n"))),
                         "sapipe index -n -t 2 -o index/reference.sai 'my ref.fa'")
        self.assertEqual(wrapper.command_line(Job(named(["results/s.mums"]), named(["results/s.mums.bwz"]), named(command="compress"))),
                         "sapipe compress -p 2 -c results/s.mums > results/s.mums.bwz")

    def test_unknown_step(self):
        with self.assertRaises(ValueError):
            wrapper.command_line(Job(named([]), named([]), named(command="nosuch")))


if __name__ == "__main__":
    unittest.main(verbosity=1)
