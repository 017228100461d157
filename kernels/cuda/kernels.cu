// The translation unit that `make kernels` compiles into sapipe.fatbin: each .cu of the backend,
// included here (nvcc makes one fatbin of one translation unit). A new .cu file is added below.

#include "sapipe.cu"
#include "fmsearch.cu"
