// Package workflows holds no code of sapipe: it is the home of the workflow files (the Snakemake
// wrapper and example in snakemake/, the Nextflow modules and example pipeline in nextflow/) and
// of their Go tests. Nextflow cannot be installed on the build machines, so the tests read the
// modules the way Nextflow would: they check their structure, render each module's script
// block with the values Nextflow would give it, run it with bash against a freshly built sapipe,
// and run the example pipeline's steps that way, comparing the result with one sapipe run.
// test.sh runs the Snakemake example end to end and checks that both engines run the same
// command lines.
package workflows
