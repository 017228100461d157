process SAPIPE_MERGE {
    tag "$meta.id"
    label 'process_single'

    conda "${moduleDir}/environment.yml"

    input:
    // The parts in shard order: sort them by file name (not by path: their work directories
    // are in no order), e.g. groupTuple(sort: { a, b -> a.name <=> b.name }). Each is staged
    // in its own numbered folder, in order, so that parts may share a name.
    tuple val(meta), path(parts, stageAs: 'part*/*')

    output:
    tuple val(meta), path("*.mums"), emit: mums
    path "versions.yml"            , emit: versions

    when:
    task.ext.when == null || task.ext.when

    script:
    def args = task.ext.args ?: ''
    def prefix = task.ext.prefix ?: "${meta.id}"
    """
    sapipe merge $args -o ${prefix}.mums $parts

    cat <<-END_VERSIONS > versions.yml
    "${task.process}":
        sapipe: \$(sapipe --version | sed '1!d; s/^sapipe //')
    END_VERSIONS
    """

    stub:
    def prefix = task.ext.prefix ?: "${meta.id}"
    """
    touch ${prefix}.mums

    cat <<-END_VERSIONS > versions.yml
    "${task.process}":
        sapipe: \$(sapipe --version | sed '1!d; s/^sapipe //')
    END_VERSIONS
    """
}
