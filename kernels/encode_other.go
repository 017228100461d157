//go:build !amd64 || purego

package kernels

// There is no vector path here: Fill uses the 256-entry tables.
const vecFill = false

func fillFwdVec(dst, src []byte, t *vecTables) int { return 0 }

func fillRevVec(dst, src []byte, t *vecTables) int { return 0 }
