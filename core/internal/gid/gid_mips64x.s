//go:build mips64 || mips64le

#include "textflag.h"

// func Self() uintptr: the g of the calling goroutine, which mips64 keeps in a register (R30).
TEXT ·Self(SB), NOSPLIT, $0-8
	MOVV g, R1
	MOVV R1, ret+0(FP)
	RET
