# sapipe: `make` builds bin/sapipe, `make test` runs the tests, `make bench` prints the peer table.
GO       ?= go
VERSION  ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT   ?= $(shell git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
LDFLAGS  := -s -w -X main.version=$(VERSION) -X main.commit=$(COMMIT)
SHARED   ?= ../shared

.PHONY: all build test test-nodriver cross test-short race fuzz bench bench-compress bench-sa bench-index bench-scale bench-multigpu gobench demo clean kernels test-workflows release

all: build

build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o bin/sapipe ./cmd/sapipe

test:
	$(GO) vet ./...
	$(GO) test ./...
	$(MAKE) cross

# The tree builds for macOS too (no GPU there; the CPU path and the hints it can take).
cross:
	GOOS=darwin GOARCH=arm64 CGO_ENABLED=0 $(GO) build -o /dev/null ./...
	GOOS=darwin GOARCH=amd64 CGO_ENABLED=0 $(GO) build -o /dev/null ./...

# The tests on a host where no CUDA driver is found, whatever this one has (CI runs it too).
test-nodriver:
	SAPIPE_LIBCUDA=/nonexistent/libcuda.so.1 $(GO) test ./...

test-short:
	$(GO) test -short ./...

race:
	$(GO) test -race -short ./...

# The workflows end to end: the Snakemake example (needs snakemake) against one sapipe run, the
# Nextflow modules' commands against Snakemake's, the YAML and Groovy files parsed (groovy if
# installed), the Bioconda recipe's test commands, a release build. CI runs it after make test.
test-workflows:
	bash workflows/test.sh

# Each fuzz target for a while; FUZZTIME=5m make fuzz for longer.
FUZZTIME ?= 30s
fuzz:
	$(GO) test ./formats -run XXX -fuzz FuzzReader -fuzztime $(FUZZTIME)
	$(GO) test ./cmd/sapipe -run XXX -fuzz FuzzArgs -fuzztime $(FUZZTIME)
	$(GO) test ./kernels/cpu -run XXX -fuzz FuzzSuffixArray -fuzztime $(FUZZTIME)
	$(GO) test ./formats -run XXX -fuzz '^FuzzBWTReader$$' -fuzztime $(FUZZTIME)
	$(GO) test ./kernels/cpu -run XXX -fuzz '^FuzzInverseBWT$$' -fuzztime $(FUZZTIME)
	$(GO) test ./kernels/cpu -run XXX -fuzz '^FuzzInverseBWTSampled$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 200x
	$(GO) test ./formats -run XXX -fuzz '^FuzzRawReader$$' -fuzztime $(FUZZTIME)
	$(GO) test ./cmd/sapipe -run XXX -fuzz '^FuzzShardTemplate$$' -fuzztime $(FUZZTIME)
	$(GO) test ./formats -run XXX -fuzz '^FuzzIndexFile$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 200x
	$(GO) test ./stages -run XXX -fuzz '^FuzzIndexLoad$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 200x
	$(GO) test ./formats -run XXX -fuzz '^FuzzPatternReader$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 200x
	$(GO) test ./formats/bwz -run XXX -fuzz '^FuzzDecodeBlock$$' -fuzztime $(FUZZTIME)
	$(GO) test ./formats/bwz -run XXX -fuzz '^FuzzReader$$' -fuzztime $(FUZZTIME)
	$(GO) test ./formats/bwz -run XXX -fuzz '^FuzzDecodeReads$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 200x
	$(GO) test ./formats/bwz -run XXX -fuzz '^FuzzReadsRoundTrip$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 200x
	$(GO) test ./stages -run XXX -fuzz '^FuzzDecompress$$' -fuzztime $(FUZZTIME)
	$(GO) test ./stages -run XXX -fuzz '^FuzzLoadReference$$' -fuzztime $(FUZZTIME)
	$(GO) test ./kernels/cpu -run XXX -fuzz '^FuzzLoadPage$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 200x

# Side by side with the real peers on the benchmark inputs of ../shared/tools/make-bench-data.sh.
bench: build
	SHARED=$(SHARED) bash tools/bench.sh
	$(MAKE) bench-sa
	$(MAKE) bench-index
	$(MAKE) bench-compress

# sapipe compress beside bzip2, lbzip2, pbzip2, bzip3, zstd and xz (size, ratio, MB/s both ways).
bench-compress: build
	SHARED=$(SHARED) bash tools/bench-compress.sh

# Suffix array construction: sapipe's CPU path beside libsais 2.10.4 (LIBSAIS_SRC: its source or a
# git clone; see tools/sabench/sabench.sh), libdivsufsort and Go's index/suffixarray (seconds).
bench-sa:
	SHARED=$(SHARED) bash tools/sabench/sabench.sh

# The persistent index: sapipe index beside bwa index (and bowtie2-build), start-up against the
# index file, count/locate throughput for PATTERNS (10 M) patterns of 20-150 bases.
bench-index: build
	SHARED=$(SHARED) bash tools/bench-index.sh

# sapipe at human scale on inputs tools/genscale makes (deterministic): index, mummer, genome
# against genome, count and locate, GPU and CPU (tools/bench-scale.sh; SIZE=3.1G READS=10M,
# ROWS="index mummer genome count", DEVICES="gpu cpu", DEST=/tmp/scale by default). Builds
# bin/sapipe and bin/genscale where Go is, else uses them as found (for the GPU machine).
bench-scale:
	bash tools/bench-scale.sh

# One GPU against all of a machine's, the same command and inputs, outputs compared by md5:
# mummer against E. coli (100 M reads), compress of 1 GB, and (ROWS=pages) a 3.1 Gbp index held
# whole and split over the cards (tools/bench-multigpu.sh; CARDS="gpu:0 gpu:all" by default).
bench-multigpu:
	bash tools/bench-multigpu.sh

# Go micro-benchmarks (MB/s).
gobench:
	$(GO) test -run XXX -bench . -benchtime 3x ./...

# The GPU kernels: kernels/cuda/*.cu into one committed fatbin (sm_80 and sm_90 code, compute_80
# PTX for newer GPUs). Needs nvcc (bash $(SHARED)/tools/cuda-setup.sh installs CUDA 11.8); a
# normal build needs none, the fatbin is embedded.
NVCC       ?= nvcc
CUDA_ARCHS := -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90 -gencode arch=compute_80,code=compute_80
kernels: kernels/cuda/sapipe.fatbin
kernels/cuda/sapipe.fatbin: $(wildcard kernels/cuda/*.cu kernels/cuda/*.cuh)
	$(NVCC) -std=c++17 -O3 -fatbin $(CUDA_ARCHS) -o $@ kernels/cuda/kernels.cu

# The main job on bundled data: lambda phage reads against the lambda genome.
demo: build
	bin/sapipe mummer -maxmatch -l 20 -b -c testdata/mummer/lambda-reads/ref.fa testdata/mummer/lambda-reads/reads.fa | head -n 20

# Release binaries for PLATFORMS: no cgo, version and commit linked in, one tar.gz each (the
# binary, the README and docs/, reproducible: files dated to the commit) and SHA256SUMS in dist/.
# On Linux the binaries need only the system's libc and dynamic loader, which the CUDA driver
# is opened through at run time.
PLATFORMS ?= linux/amd64 linux/arm64 darwin/amd64 darwin/arm64
release:
	rm -rf dist && mkdir -p dist
	set -e; epoch=$$(git log -1 --format=%ct 2>/dev/null || echo 0); \
	for p in $(PLATFORMS); do \
		os=$${p%/*}; arch=$${p#*/}; d=sapipe-$(VERSION)-$$os-$$arch; \
		CGO_ENABLED=0 GOOS=$$os GOARCH=$$arch $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o dist/$$d/sapipe ./cmd/sapipe; \
		cp -r README.md docs dist/$$d/; \
		tar -C dist --sort=name --owner=0 --group=0 --numeric-owner --mtime=@$$epoch -cf - $$d | gzip -n > dist/$$d.tar.gz; \
		rm -r dist/$$d; \
	done
	cd dist && sha256sum *.tar.gz > SHA256SUMS

clean:
	rm -rf bin dist
