#include "textflag.h"

// func Self() uintptr: the g of the calling goroutine, which s390x keeps in a register (R13).
TEXT ·Self(SB), NOSPLIT, $0-8
	MOVD g, R1
	MOVD R1, ret+0(FP)
	RET
