process SAPIPE_MUMMER {
    tag "$meta.id"
    label 'process_high'

    conda "${moduleDir}/environment.yml"

    input:
    tuple val(meta), path(reads)
    tuple val(meta2), path(reference)

    output:
    tuple val(meta), path("*.mums"), emit: mums
    path "versions.yml"            , emit: versions

    when:
    task.ext.when == null || task.ext.when

    script:
    def args = task.ext.args ?: ''
    def prefix = task.ext.prefix ?: "${meta.id}"
    // With an accelerator directive the job runs on its GPU; else sapipe picks (a GPU if usable).
    def device = task.ext.device ?: (task.accelerator ? 'gpu' : 'auto')
    // A reference indexed by SAPIPE_INDEX is given with --index.
    def ref = reference.name.endsWith('.sai') ? "--index ${reference}" : "${reference}"
    """
    sapipe mummer $args --device $device -t $task.cpus -o ${prefix}.mums $ref $reads

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
