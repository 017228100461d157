process SAPIPE_COMPRESS {
    tag "$meta.id"
    label 'process_medium'

    conda "${moduleDir}/environment.yml"

    input:
    tuple val(meta), path(uncompressed)

    output:
    tuple val(meta), path("*.bwz"), emit: bwz
    path "versions.yml"           , emit: versions

    when:
    task.ext.when == null || task.ext.when

    script:
    def args = task.ext.args ?: ''
    def prefix = task.ext.prefix ?: "${uncompressed.name}"
    """
    sapipe compress $args -p $task.cpus -c $uncompressed > ${prefix}.bwz

    cat <<-END_VERSIONS > versions.yml
    "${task.process}":
        sapipe: \$(sapipe --version | sed '1!d; s/^sapipe //')
    END_VERSIONS
    """

    stub:
    def prefix = task.ext.prefix ?: "${uncompressed.name}"
    """
    touch ${prefix}.bwz

    cat <<-END_VERSIONS > versions.yml
    "${task.process}":
        sapipe: \$(sapipe --version | sed '1!d; s/^sapipe //')
    END_VERSIONS
    """
}
