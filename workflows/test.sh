#!/usr/bin/env bash
# The workflow test: `make test-workflows`, which CI (.ci/run) runs after `make test`.
#
#  1. builds sapipe with the Makefile (version and commit linked in), and with go install;
#  2. runs the example Snakefile end to end on the bundled lambda data (split into 4 shards,
#     mummer per shard, merge) and compares the merged output with one sapipe run, byte for byte;
#  3. checks the failure path: a bad read set makes snakemake exit non-zero and leaves no shard
#     or result behind; and the GPU setting (gpu=true) gives the mummer jobs the gpu resource
#     and --device gpu;
#  4. emulates the Nextflow example pipeline from the modules' script blocks (go test
#     ./workflows) and checks that its sapipe command lines are Snakemake's;
#  5. parses every YAML file (and the Bioconda recipe after Jinja) and, with groovy installed,
#     every Nextflow file with Groovy's parser;
#  6. runs the Bioconda recipe's test commands against a release build (make release).
#
# Needs: go, make, snakemake (Debian's package), python3 with yaml (snakemake's); groovy and
# jinja2 optional (CI installs groovy; jinja2 comes with snakemake).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
export PATH=$PATH:/usr/local/go/bin
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
t0=$SECONDS
step() { printf '== %s (%ds)\n' "$*" $((SECONDS - t0)); }
fail() { printf 'FAIL: %s\n' "$*" >&2; exit 1; }

step "build"
make -s build
export PATH="$root/bin:$PATH"
sapipe --version
[ "$(sapipe --version | sed -n 2p)" = "commit $(git rev-parse --short=12 HEAD)" ] || fail "--version does not name the commit"
GOBIN="$tmp/gobin" CGO_ENABLED=0 go install ./cmd/sapipe
v=$("$tmp/gobin/sapipe" --version) && [[ $v == "sapipe "* ]] || fail "go install"

command -v snakemake >/dev/null || fail "snakemake not found (Debian: apt-get install snakemake)"
py=$(head -n 1 "$(command -v snakemake)" | sed 's/^#! *//; s/ .*//') # snakemake's own python
[ -x "$py" ] || py=python3

step "snakemake $(snakemake --version): the example workflow"
smk=$tmp/smk
mkdir -p "$smk"
ln -s "$root/testdata" "$smk/testdata"
snakemake -s workflows/snakemake/Snakefile --directory "$smk" --cores 2 --notemp --quiet >"$tmp/smk.out" 2>&1 ||
	{ cat "$tmp/smk.out"; fail "snakemake"; }
args=$("$py" -c 'import yaml,sys; print(yaml.safe_load(open(sys.argv[1]))["mummer_args"])' workflows/snakemake/config.yaml)
data=testdata/mummer/lambda-reads
# shellcheck disable=SC2086 # args holds several options
sapipe mummer -q $args $data/ref.fa $data/reads.fa >"$tmp/single.mums"
cmp "$smk/results/lambda.mums" "$tmp/single.mums" || fail "the merged output differs from one sapipe run"
n=$(ls "$smk"/shards/lambda.*.fa.gz | wc -l)
[ "$n" -eq 4 ] || fail "$n shards, want 4"
cat "$smk"/shards/lambda.*.fa.gz | gzip -dc | cmp - $data/reads.fa || fail "the shards put together are not the reads"
echo "merged output of $n shards = one run ($(wc -c <"$tmp/single.mums") bytes)"

step "snakemake: a failing step fails the workflow and leaves nothing behind"
bad=$tmp/bad
mkdir -p "$bad"
ln -s "$root/testdata" "$bad/testdata"
printf '@r1\nACGT\n+\nIIII\n@r2\nACGTACGT\n+\nIII\n' >"$bad/bad.fq"
# The config extends the example's: the lambda sample stays, a broken one is added.
printf 'samples:\n  broken: %s\n' "$bad/bad.fq" >"$bad/config.yaml"
if snakemake -s workflows/snakemake/Snakefile --directory "$bad" --configfile "$bad/config.yaml" --cores 1 --quiet >"$tmp/bad.out" 2>&1; then
	fail "snakemake succeeded on a malformed read set"
fi
log=$bad/logs/split/broken.fq.gz.log
grep -q 'bad.fq: record 2 (line 8): ' "$log" || { cat "$tmp/bad.out"; fail "the split log does not name the bad record"; }
left=$(cd "$bad" && find shards mums results -name 'broken*' 2>/dev/null || true)
[ -z "$left" ] || fail "outputs left behind: $left"
echo "snakemake failed as it should, leaving no output; the log says: $(tail -n 1 "$log")"

gpujobs=$(snakemake -s workflows/snakemake/Snakefile --directory "$smk" --cores 2 -n -F --config gpu=true 2>&1 |
	awk '/^rule /{r=$2} /resources: .*gpu=1/{print r}' | sort | uniq -c | tr '\n' ' ' | tr -s ' ')
case "$gpujobs" in
" 4 mummer: " | " 1 index: 4 mummer: ") echo "gpu=true: jobs asking for the gpu resource:$gpujobs" ;;
*) fail "gpu=true: jobs asking for a GPU:$gpujobs; want the 4 mummer jobs (and index)" ;;
esac
"$py" workflows/snakemake/wrapper/test_wrapper.py || fail "the wrapper's command lines"

step "nextflow: the example pipeline emulated from the modules, and its commands against Snakemake's"
SAPIPE_NF_COMMANDS=$tmp/nf.txt go test -count=1 ./workflows
shopt -s nullglob
smklogs=("$smk"/logs/*.log "$smk"/logs/*/*.log) # the index step logs at the top
shopt -u nullglob
grep -h '^+ sapipe ' "${smklogs[@]}" | sed 's/^+ //' >"$tmp/smk.txt"
normalize() { # file names without folders, words sorted by line
	"$py" -c '
import os, shlex, sys
for line in open(sys.argv[1]):
    print(" ".join(os.path.basename(w) if "/" in w else w for w in shlex.split(line)))' "$1" | sort
}
normalize "$tmp/smk.txt" >"$tmp/smk.norm"
normalize "$tmp/nf.txt" >"$tmp/nf.norm"
diff "$tmp/smk.norm" "$tmp/nf.norm" || fail "Snakemake (<) and the Nextflow modules (>) run different commands"
echo "$(wc -l <"$tmp/nf.norm") command lines, the same in both engines:"
sed 's/^/    /' "$tmp/nf.norm"

step "YAML and Groovy files parse"
"$py" - "$root" <<'EOF'
import glob, os, sys, yaml
root = sys.argv[1]
files = [f for pat in ("workflows/**/*.yml", "workflows/**/*.yaml") for f in glob.glob(os.path.join(root, pat), recursive=True)]
for f in files:
    yaml.safe_load(open(f))
recipe = open(os.path.join(root, "packaging/bioconda/meta.yaml")).read()
try:
    import jinja2
except ImportError:
    print("jinja2 missing: the Bioconda recipe is not rendered")
    sys.exit(0)
text = jinja2.Template(recipe).render(compiler=lambda lang: "go-nocgo-compiler", pin_subpackage=lambda name, **kw: name)
meta = yaml.safe_load(text)
for key in ("package", "source", "build", "requirements", "test", "about"):
    assert key in meta, "recipe: no " + key
assert meta["package"]["name"] == "sapipe"
with open(os.path.join(os.environ.get("TMPDIR", "/tmp"), "sapipe-recipe-tests.sh"), "w") as out:
    out.write("\n".join(meta["test"]["commands"]) + "\n")
print(f"{len(files)} YAML files and the Bioconda recipe parse")
EOF
mv "${TMPDIR:-/tmp}/sapipe-recipe-tests.sh" "$tmp/recipe-tests.sh"
if command -v groovy >/dev/null; then
	if [ -z "${JAVA_HOME:-}" ] && [ ! -x /usr/lib/jvm/default-java/bin/java ] && command -v java >/dev/null; then
		JAVA_HOME=$(dirname "$(dirname "$(readlink -f "$(command -v java)")")")
		export JAVA_HOME
	fi
	(cd workflows/nextflow && groovy tests/parse.groovy main.nf nextflow.config nf-test.config tests/*.config \
		tests/*.nf.test modules/sapipe/*/main.nf modules/sapipe/*/tests/*.nf.test 2>&1 | grep -v '^WARNING') ||
		fail "Groovy does not parse the Nextflow files"
else
	echo "groovy not installed: the Nextflow files are not parsed (apt-get install groovy)"
fi

step "release build and the Bioconda recipe's tests"
ver=$(git describe --tags --always --dirty 2>/dev/null || echo dev)
make -s release PLATFORMS=linux/amd64 VERSION="$ver"
(cd dist && sha256sum -c SHA256SUMS)
mkdir -p "$tmp/conda/bin" "$tmp/conda/work"
tar -xzf "dist/sapipe-$ver-linux-amd64.tar.gz" -C "$tmp"
cp "$tmp/sapipe-$ver-linux-amd64/sapipe" "$tmp/conda/bin/"
"$tmp/conda/bin/sapipe" --version
# The recipe's tests, with the recipe's version taken as the binary's.
recipe_ver=$(sed -n 's/^{% set version = "\(.*\)" %}$/\1/p' packaging/bioconda/meta.yaml)
sed -i "s/\"sapipe $recipe_ver\"/\"sapipe $ver\"/" "$tmp/recipe-tests.sh"
(cd "$tmp/conda/work" && PATH="$tmp/conda/bin:$PATH" bash -euo pipefail "$tmp/recipe-tests.sh") || fail "the recipe's tests"
echo "the recipe's $(wc -l <"$tmp/recipe-tests.sh") test commands pass"

step "all workflow tests passed"
