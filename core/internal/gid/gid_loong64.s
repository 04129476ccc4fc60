#include "textflag.h"

// func Self() uintptr: the g of the calling goroutine, which loong64 keeps in a register (R22).
TEXT ·Self(SB), NOSPLIT, $0-8
	MOVV g, R4
	MOVV R4, ret+0(FP)
	RET
