#include "textflag.h"

// func Self() uintptr: the g of the calling goroutine, from thread-local storage (what the
// runtime's get_tls and g macros read on amd64).
TEXT ·Self(SB), NOSPLIT, $0-8
	MOVQ TLS, CX
	MOVQ 0(CX)(TLS*1), AX
	MOVQ AX, ret+0(FP)
	RET
