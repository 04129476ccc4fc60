// Package gid tells goroutines apart: Self returns a value that identifies the goroutine
// calling it, for as long as that goroutine lives. Package core uses it to check that a Ctx is
// used only by the code that owns it (its handler's coroutine, its continuation, its hooks) and
// never by a goroutine that kept it.
//
// The value is the address of the runtime's descriptor of the goroutine (its g), read where the
// Go assembler keeps it: through thread-local storage on amd64 and in the g register on arm64 —
// the conventions every Go assembly file relies on, not a layout of the runtime's. Only its
// identity is used: it is never turned back into a pointer. A goroutine that has ended may
// leave its descriptor to a new one, so a value identifies a goroutine only while it lives;
// core clears what it records before the goroutine it names can end.
//
// On other architectures Self is exact only in builds with the race detector, where it reads
// the goroutine's number from its stack trace (slow, but that build is for finding misuse);
// elsewhere it returns the same value for every goroutine, and Exact is false.
package gid
