package cuda

import _ "embed"

// fatbin holds the compiled kernels: sm_80 and sm_90 machine code and compute_80 PTX, built from
// the .cu sources here by `make kernels` and committed, so that building sapipe needs no nvcc.
//
//go:embed sapipe.fatbin
var fatbin []byte
