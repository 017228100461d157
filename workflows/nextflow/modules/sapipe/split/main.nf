process SAPIPE_SPLIT {
    tag "$meta.id"
    label 'process_low'

    // sapipe is one static binary; conda installs it from the Bioconda recipe in packaging/
    // (or put sapipe on PATH and run without conda).
    conda "${moduleDir}/environment.yml"

    input:
    tuple val(meta), path(reads)
    val shards

    output:
    tuple val(meta), path("*.[0-9][0-9][0-9][0-9]*.f[aq]*"), emit: shards
    path "versions.yml"                                    , emit: versions

    when:
    task.ext.when == null || task.ext.when

    script:
    def args = task.ext.args ?: ''
    def prefix = task.ext.prefix ?: "${meta.id}"
    def suffix = task.ext.suffix ?: ((reads.name =~ /\.f(ast)?q(\.(gz|zst|xz|bz2|bwz))?$/) ? 'fq.gz' : 'fa.gz')
    """
    sapipe split $args -n $shards -t $task.cpus -o ${prefix}.%04d.${suffix} $reads

    cat <<-END_VERSIONS > versions.yml
    "${task.process}":
        sapipe: \$(sapipe --version | sed '1!d; s/^sapipe //')
    END_VERSIONS
    """

    stub:
    def prefix = task.ext.prefix ?: "${meta.id}"
    """
    for i in \$(seq 0 \$(( $shards - 1 ))); do
        echo ">stub" | gzip > ${prefix}.\$(printf %04d \$i).fa.gz
    done

    cat <<-END_VERSIONS > versions.yml
    "${task.process}":
        sapipe: \$(sapipe --version | sed '1!d; s/^sapipe //')
    END_VERSIONS
    """
}
