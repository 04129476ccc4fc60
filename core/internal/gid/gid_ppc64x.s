//go:build ppc64 || ppc64le

#include "textflag.h"

// func Self() uintptr: the g of the calling goroutine, which ppc64 keeps in a register (R30).
TEXT ·Self(SB), NOSPLIT, $0-8
	MOVD g, R3
	MOVD R3, ret+0(FP)
	RET
