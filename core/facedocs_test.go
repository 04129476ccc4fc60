package core

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFaceDocs keeps the two copies of the API's documentation one: every method and function
// core forwards (every name both have) says what serve's says, word for word, and so does every handle type (a type
// whose only field is serve's); so a change to one that is not made to the other fails here.
// Where they differ on purpose: Ctx.HandOver (serve's takes its own protocols too), and the
// data types (Options, Stats...), which core alone documents and serve only lays out.
func TestFaceDocs(t *testing.T) {
	face, code := apiDocs(t, "."), apiDocs(t, "internal/serve")
	handles := map[string]bool{"Ctx": true, "Conn": true, "Loop": true, "Server": true,
		"Remote": true, "Timer": true, "Route": true, "ServedConn": true, "Seam": true,
		"Waker": true, "RequestBytes": true}
	checked := 0
	for name, doc := range face {
		if name == "Ctx.HandOver" || strings.HasPrefix(name, "type ") && !handles[name[len("type "):]] {
			continue
		}
		if name == "type Server" { // serve's also names its Multiplexer
			continue
		}
		want, ok := code[name]
		if !ok {
			continue // core's own, not forwarded (ListenAndServe)
		}
		if doc != want {
			t.Errorf("%s: core's documentation is not serve's:\ncore:  %q\nserve: %q", name, doc, want)
		}
		checked++
	}
	if checked < 100 {
		t.Errorf("only %d names compared: the files were not read", checked)
	}
}

// apiDocs returns the doc comments of the exported functions, methods ("Type.Method") and types
// ("type T") in the non-test files of dir.
func apiDocs(t *testing.T, dir string) map[string]string {
	t.Helper()
	fset := token.NewFileSet()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var files []*ast.File
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	docs := map[string]string{}
	for _, f := range files {
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.GenDecl:
				for _, sp := range d.Specs {
					ts, ok := sp.(*ast.TypeSpec)
					if !ok || !ts.Name.IsExported() {
						continue
					}
					if doc := ts.Doc; doc != nil {
						docs["type "+ts.Name.Name] = doc.Text()
					} else if d.Doc != nil {
						docs["type "+ts.Name.Name] = d.Doc.Text()
					}
				}
			case *ast.FuncDecl:
				if !d.Name.IsExported() || d.Doc == nil {
					continue
				}
				name := d.Name.Name
				if d.Recv != nil {
					rt := d.Recv.List[0].Type
					if s, ok := rt.(*ast.StarExpr); ok {
						rt = s.X
					}
					name = rt.(*ast.Ident).Name + "." + name
				}
				docs[name] = d.Doc.Text()
			}
		}
	}
	return docs
}
