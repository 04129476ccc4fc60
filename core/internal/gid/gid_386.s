#include "textflag.h"

// func Self() uintptr: the g of the calling goroutine, from thread-local storage (what the
// runtime's get_tls and g macros read on 386).
TEXT ·Self(SB), NOSPLIT, $0-4
	MOVL TLS, CX
	MOVL 0(CX)(TLS*1), AX
	MOVL AX, ret+0(FP)
	RET
