//go:build !saphase

package cpu

// No-op hooks for the phase timings of sais_phase.go (build tag saphase).

func saPhase(string)           {}
func saPhaseDepth(int)         {}
func saPhaseLevel(_, _, _ int) {}
func saBlock(int, int32)       {}
func saTeamStep(bool)          {}
func saTeamSolo()              {}
