//go:build !amd64 || purego

package cpu

// maxUint32 is the largest of s's values as unsigned.
func maxUint32(s []int32) uint32 { return maxUint32Go(s) }
