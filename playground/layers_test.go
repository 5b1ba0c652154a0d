package playground

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestPackage_KnowsNoHTTP: the engine takes and returns typed values; URLs,
// HTTP and HTML belong to web. (modernc.org/sqlite itself imports net/url
// to read its connection strings; this is about the engine's own code.)
func TestPackage_KnowsNoHTTP(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		ast, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range ast.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if path == "net/url" || path == "net/http" || strings.HasPrefix(path, "net/http/") || strings.HasPrefix(path, "github.com/a-h/templ") {
				t.Errorf("%s imports %s", f, path)
			}
		}
	}
}
