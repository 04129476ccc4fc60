#include "textflag.h"

// func Self() uintptr: the g of the calling goroutine, which arm keeps in a register (R10).
TEXT ·Self(SB), NOSPLIT, $0-4
	MOVW g, R0
	MOVW R0, ret+0(FP)
	RET
