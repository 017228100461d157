#!/usr/bin/env bash
# Bioconda build: the Makefile's build (no cgo, -trimpath, version linked in), installed into
# $PREFIX. A source tarball has no git history, so the commit is named by the version's tag.
set -euo pipefail
make build GO=go VERSION="${PKG_VERSION}" COMMIT="v${PKG_VERSION}"
install -d "${PREFIX}/bin"
install -m 755 bin/sapipe "${PREFIX}/bin/sapipe"
