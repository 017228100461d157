# sapipe: `make` builds bin/sapipe, `make test` runs the tests, `make bench` prints the peer table.
GO       ?= go
VERSION  ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS  := -s -w -X main.version=$(VERSION)
SHARED   ?= ../shared

.PHONY: all build test test-short race fuzz bench bench-sa gobench demo clean

all: build

build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o bin/sapipe ./cmd/sapipe

test:
	$(GO) vet ./...
	$(GO) test ./...

test-short:
	$(GO) test -short ./...

race:
	$(GO) test -race -short ./...

# Each fuzz target for a while; FUZZTIME=5m make fuzz for longer.
FUZZTIME ?= 30s
fuzz:
	$(GO) test ./formats -run XXX -fuzz FuzzReader -fuzztime $(FUZZTIME)
	$(GO) test ./cmd/sapipe -run XXX -fuzz FuzzArgs -fuzztime $(FUZZTIME)
	$(GO) test ./kernels/cpu -run XXX -fuzz FuzzSuffixArray -fuzztime $(FUZZTIME)
	$(GO) test ./formats -run XXX -fuzz '^FuzzBWTReader$$' -fuzztime $(FUZZTIME)
	$(GO) test ./kernels/cpu -run XXX -fuzz '^FuzzInverseBWT$$' -fuzztime $(FUZZTIME)

# Side by side with the real peers on the benchmark inputs of ../shared/tools/make-bench-data.sh.
bench: build
	SHARED=$(SHARED) bash tools/bench.sh
	$(MAKE) bench-sa

# Suffix array construction: sapipe's CPU path, libdivsufsort and Go's index/suffixarray (MB/s).
bench-sa:
	SHARED=$(SHARED) bash tools/sabench/sabench.sh

# Go micro-benchmarks (MB/s).
gobench:
	$(GO) test -run XXX -bench . -benchtime 3x ./...

# The main job on bundled data: lambda phage reads against the lambda genome.
demo: build
	bin/sapipe mummer -maxmatch -l 20 -b -c testdata/mummer/lambda-reads/ref.fa testdata/mummer/lambda-reads/reads.fa | head -n 20

clean:
	rm -rf bin
