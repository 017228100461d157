process SAPIPE_INDEX {
    tag "$meta.id"
    label 'process_medium'

    conda "${moduleDir}/environment.yml"

    input:
    tuple val(meta), path(fasta)

    output:
    tuple val(meta), path("*.sai"), emit: index
    path "versions.yml"           , emit: versions

    when:
    task.ext.when == null || task.ext.when

    script:
    def args = task.ext.args ?: ''
    def prefix = task.ext.prefix ?: "${meta.id}"
    """
    sapipe index $args -t $task.cpus -o ${prefix}.sai $fasta

    cat <<-END_VERSIONS > versions.yml
    "${task.process}":
        sapipe: \$(sapipe --version | sed '1!d; s/^sapipe //')
    END_VERSIONS
    """

    stub:
    def prefix = task.ext.prefix ?: "${meta.id}"
    """
    touch ${prefix}.sai

    cat <<-END_VERSIONS > versions.yml
    "${task.process}":
        sapipe: \$(sapipe --version | sed '1!d; s/^sapipe //')
    END_VERSIONS
    """
}
