//go:build mips || mipsle

#include "textflag.h"

// func Self() uintptr: the g of the calling goroutine, which mips keeps in a register (R30).
TEXT ·Self(SB), NOSPLIT, $0-4
	MOVW g, R1
	MOVW R1, ret+0(FP)
	RET
