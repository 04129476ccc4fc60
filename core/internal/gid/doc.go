// Package gid tells goroutines apart: Self returns a value that identifies the goroutine
// calling it, for as long as that goroutine lives. Package serve (owner.go) uses it to check that a Ctx is
// used only by the code that owns it (its handler's coroutine, its continuation, its hooks) and
// never by a goroutine that kept it, and to answer serve's Loop.OnLoop.
//
// The value is the address of the runtime's descriptor of the goroutine (its g), read where the
// Go assembler keeps it on each architecture: through thread-local storage on 386 and amd64,
// and in the register the assembler calls g everywhere else (arm, arm64, loong64, mips,
// mips64, ppc64, riscv64, s390x) — the conventions every Go assembly file relies on, not a
// layout of the runtime's. Only its identity is used: it is never turned back into a pointer.
// A goroutine that has ended may leave its descriptor to a new one, so a value identifies a
// goroutine only while it lives; serve clears what it records before the goroutine it names can
// end. On wasm, whose assembler cannot name g outside the runtime, Self is the goroutine's
// number (Number): as exact, and slower.
package gid
