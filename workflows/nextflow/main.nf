#!/usr/bin/env nextflow
/*
 * Example sapipe pipeline, the Nextflow twin of workflows/snakemake/Snakefile: index the
 * reference once (--index), cut each read set into shards, match every shard in its own task
 * (on a GPU with -profile gpu), and merge the shards' outputs into exactly what one
 * `sapipe mummer` run over all the reads prints; optionally compress the result (--compress).
 *
 *   nextflow run workflows/nextflow                     # the bundled lambda phage data
 *   nextflow run workflows/nextflow --input my.csv --reference genome.fa --shards 64 -profile gpu
 *
 * --input is a CSV with the columns sample,reads (relative paths are relative to the CSV).
 * The modules (modules/sapipe/*) run the same command lines as the Snakemake wrapper.
 */
nextflow.enable.dsl = 2

include { SAPIPE_INDEX    } from './modules/sapipe/index/main'
include { SAPIPE_SPLIT    } from './modules/sapipe/split/main'
include { SAPIPE_MUMMER   } from './modules/sapipe/mummer/main'
include { SAPIPE_MERGE    } from './modules/sapipe/merge/main'
include { SAPIPE_COMPRESS } from './modules/sapipe/compress/main'

workflow {
    def sheet = file(params.input, checkIfExists: true)
    reads = Channel
        .fromPath(sheet)
        .splitCsv(header: true)
        .map { row ->
            def path = row.reads.startsWith('/') ? row.reads : "${sheet.parent}/${row.reads}"
            [ [ id: row.sample ], file(path, checkIfExists: true) ]
        }
    reference = Channel.value([ [ id: 'reference' ], file(params.reference, checkIfExists: true) ])

    if (params.index) {
        SAPIPE_INDEX(reference)
        target = SAPIPE_INDEX.out.index.first()
    } else {
        target = reference
    }

    SAPIPE_SPLIT(reads, params.shards)

    // One task per shard; the shard's name (without its ending) names its output.
    shards = SAPIPE_SPLIT.out.shards.flatMap { meta, files ->
        (files instanceof List ? files : [ files ]).collect { shard ->
            [ meta + [ id: shard.name.replaceFirst(/\.f[aq](\.(gz|zst|xz|bz2|bwz))?$/, ''), sample: meta.id ], shard ]
        }
    }
    SAPIPE_MUMMER(shards, target)

    // Back together per sample, in shard order: by file name, never by work-directory path.
    parts = SAPIPE_MUMMER.out.mums
        .map { meta, mums -> [ [ id: meta.sample ], mums ] }
        .groupTuple(size: params.shards, sort: { a, b -> a.name <=> b.name })
    SAPIPE_MERGE(parts)

    if (params.compress) {
        SAPIPE_COMPRESS(SAPIPE_MERGE.out.mums)
    }
}
