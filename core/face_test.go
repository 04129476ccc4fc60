package core

import (
	"reflect"
	"testing"

	"github.com/dwellhttp/dwell/core/internal/serve"
)

// TestFaceLayouts proves what alias.As assumes of every value that crosses between core and
// serve: each of core's types is laid out as serve's — a handle is a struct whose only field is
// serve's, a copied type has the same fields at the same offsets, a function the same
// parameters — so that a pointer, a function or a struct read as the other is the same thing.
func TestFaceLayouts(t *testing.T) {
	pairs := []struct{ core, serve reflect.Type }{
		{reflect.TypeFor[Ctx](), reflect.TypeFor[serve.Ctx]()},
		{reflect.TypeFor[Conn](), reflect.TypeFor[serve.Conn]()},
		{reflect.TypeFor[Loop](), reflect.TypeFor[serve.Loop]()},
		{reflect.TypeFor[Server](), reflect.TypeFor[serve.Server]()},
		{reflect.TypeFor[Remote](), reflect.TypeFor[serve.Remote]()},
		{reflect.TypeFor[Timer](), reflect.TypeFor[serve.Timer]()},
		{reflect.TypeFor[Route](), reflect.TypeFor[serve.Route]()},
		{reflect.TypeFor[ServedConn](), reflect.TypeFor[serve.ServedConn]()},
		{reflect.TypeFor[Seam](), reflect.TypeFor[serve.Seam]()},
		{reflect.TypeFor[Waker](), reflect.TypeFor[serve.Waker]()},
		{reflect.TypeFor[RequestBytes](), reflect.TypeFor[serve.RequestBytes]()},
		{reflect.TypeFor[Options](), reflect.TypeFor[serve.Options]()},
		{reflect.TypeFor[Listener](), reflect.TypeFor[serve.Listener]()},
		{reflect.TypeFor[Stats](), reflect.TypeFor[serve.Stats]()},
		{reflect.TypeFor[Refusals](), reflect.TypeFor[serve.Refusals]()},
		{reflect.TypeFor[Refusal](), reflect.TypeFor[serve.Refusal]()},
		{reflect.TypeFor[Param](), reflect.TypeFor[serve.Param]()},
		{reflect.TypeFor[Handler](), reflect.TypeFor[serve.Handler]()},
		{reflect.TypeFor[func(Done)](), reflect.TypeFor[func(serve.Done)]()},
		{reflect.TypeFor[func(*Ctx, error)](), reflect.TypeFor[func(*serve.Ctx, error)]()},
		{reflect.TypeFor[func(*Ctx, any)](), reflect.TypeFor[func(*serve.Ctx, any)]()},
		{reflect.TypeFor[func(*Conn)](), reflect.TypeFor[func(*serve.Conn)]()},
	}
	for _, p := range pairs {
		if why := unlike(p.core, p.serve, map[[2]reflect.Type]bool{}); why != "" {
			t.Errorf("%v is not laid out as %v: %s", p.core, p.serve, why)
		}
	}
	// And the check can fail: a type with a field of its own is not serve's.
	type other struct {
		_ serve.Ctx
		_ int
	}
	if unlike(reflect.TypeFor[other](), reflect.TypeFor[serve.Ctx](), map[[2]reflect.Type]bool{}) == "" {
		t.Error("a wrapper with a second field passed")
	}
	if unlike(reflect.TypeFor[Done](), reflect.TypeFor[serve.ConnStates](), map[[2]reflect.Type]bool{}) == "" {
		t.Error("two unrelated structs passed")
	}
}

// unlike says how a differs in layout from b, or "" when a is laid out as b.
func unlike(a, b reflect.Type, seen map[[2]reflect.Type]bool) string {
	if a == b || seen[[2]reflect.Type{a, b}] {
		return ""
	}
	seen[[2]reflect.Type{a, b}] = true
	if a.Size() != b.Size() {
		return a.String() + " and " + b.String() + " differ in size"
	}
	if a.Kind() == reflect.Struct && a.NumField() == 1 && a.Field(0).Type == b {
		return "" // a handle: serve's value is all there is to it
	}
	if a.Kind() != b.Kind() {
		return a.String() + " and " + b.String() + " are different kinds"
	}
	switch a.Kind() {
	case reflect.Pointer, reflect.Slice:
		return unlike(a.Elem(), b.Elem(), seen)
	case reflect.Func:
		if a.NumIn() != b.NumIn() || a.NumOut() != b.NumOut() || a.IsVariadic() != b.IsVariadic() {
			return a.String() + " and " + b.String() + " take or return different numbers of values"
		}
		for i := range a.NumIn() {
			if why := unlike(a.In(i), b.In(i), seen); why != "" {
				return why
			}
		}
		for i := range a.NumOut() {
			if why := unlike(a.Out(i), b.Out(i), seen); why != "" {
				return why
			}
		}
		return ""
	case reflect.Struct:
		if a.NumField() != b.NumField() {
			return a.String() + " and " + b.String() + " have different numbers of fields"
		}
		for i := range a.NumField() {
			fa, fb := a.Field(i), b.Field(i)
			if fa.Offset != fb.Offset || fa.IsExported() && fa.Name != fb.Name {
				return a.String() + "." + fa.Name + " is not " + b.String() + "." + fb.Name
			}
			if why := unlike(fa.Type, fb.Type, seen); why != "" {
				return why
			}
		}
		return ""
	}
	return a.String() + " is not " + b.String()
}
