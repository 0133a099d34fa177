package platform

import (
	"go/ast"
	"go/parser"
	"go/token"
	"slices"
	"strconv"
	"testing"
)

// TestErrorTypesListsEveryType: ErrorTypes, which the API document lists
// by status, holds every ErrorType constant of errors.go.
func TestErrorTypesListsEveryType(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "errors.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var declared []ErrorType
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, spec := range g.Specs {
			v := spec.(*ast.ValueSpec)
			if id, ok := v.Type.(*ast.Ident); !ok || id.Name != "ErrorType" {
				continue
			}
			s, err := strconv.Unquote(v.Values[0].(*ast.BasicLit).Value)
			if err != nil {
				t.Fatal(err)
			}
			declared = append(declared, ErrorType(s))
		}
	}
	if len(declared) < 10 {
		t.Fatalf("found %d ErrorType constants in errors.go: the test no longer reads it right", len(declared))
	}
	for _, d := range declared {
		if !slices.Contains(ErrorTypes, d) {
			t.Errorf("ErrorTypes lacks %s", d)
		}
	}
	if len(ErrorTypes) != len(declared) {
		t.Errorf("ErrorTypes has %d types, errors.go declares %d", len(ErrorTypes), len(declared))
	}
}
