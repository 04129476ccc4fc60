package alias

import "unsafe"

// eface is the layout of an empty interface (the runtime's eface, internal/abi's
// EmptyInterface): the type word, then, for a type that is not pointer-shaped such as string, a
// pointer to the value.
type eface struct {
	typ, data unsafe.Pointer
}

// stringType is the type word of an interface that holds a string.
var stringType = func() unsafe.Pointer {
	var v any = ""
	return (*eface)(unsafe.Pointer(&v)).typ
}()

// BoxString makes *s the string of b's bytes and returns it in an interface whose data word is
// s itself, with none of the allocations string(b) and the conversion to any would make (the
// bytes, then the string header). It is for a value set on every request (middleware's request
// id): with s and b in one object, a given id costs one allocation rather than two, and a new
// one a share of its block's. It holds because:
//
//   - an empty interface that holds a string is string's type word and a pointer to a string
//     header, as eface says (TestBoxString checks it against v.(string) and reflect);
//   - an interface's value is never written through it: a conversion copies the value in, an
//     assertion copies it out. The caller never writes *s or b again, so the string and its
//     bytes stay as immutable as those the conversion would have made;
//   - the GC follows the data word like any pointer, also one into an object's middle (s in
//     a box beside b, or among a block's), and keeps the whole object alive as long as the
//     interface;
//   - s and b are on the heap: the caller allocates their object with new, and s reaches the
//     result, so the object escapes.
func BoxString(s *string, b []byte) any {
	*s = String(b)
	var v any
	*(*eface)(unsafe.Pointer(&v)) = eface{typ: stringType, data: unsafe.Pointer(s)}
	return v
}
