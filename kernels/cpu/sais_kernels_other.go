//go:build !amd64 || purego

package cpu

import "unsafe"

// Without the assembly kernels (sais_kernels_amd64.s: other architectures, or the build tag
// purego), the Go definitions run.

func gatherL[T symbol](a *scanArgs)  { gatherLGo[T](a) }
func gatherLW[T symbol](a *scanArgs) { gatherLWGo[T](a) }
func gatherRW[T symbol](a *scanArgs) { gatherRWGo[T](a) }
func gatherR[T symbol](a *scanArgs)  { gatherRGo[T](a) }
func gatherFL[T symbol](a *scanArgs) { gatherFLGo[T](a) }
func gatherFR[T symbol](a *scanArgs) { gatherFRGo[T](a) }

func placeL(a *placeArgs)  { placeLGo(a) }
func placeR(a *placeArgs)  { placeRGo(a) }
func placeFL(a *placeArgs) { placeFLGo(a) }
func placeFR(a *placeArgs) { placeFRGo(a) }

func countKindsK[T symbol](a *textArgs) { countKindsGo[T](a) }
func placeLMSK[T symbol](a *textArgs)   { placeLMSGo[T](a) }
func gatherLMSK[T symbol](a *textArgs)  { gatherLMSGo[T](a) }

func nameRun(run, names []int32, name int32) int32 { return nameRunGo(run, names, name) }
func mapRun(run, s1 []int32)                       { mapRunGo(run, s1) }
func compactNames(s []int32) int                   { return compactNamesGo(s) }
func shiftMarks(run []int32)                       { shiftMarksGo(run) }

func prefetchIdx(unsafe.Pointer, []int32, uint, uint) {}

func setVector(bool) bool { return false }
