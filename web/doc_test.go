package web

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestDocCatalogue_MatchesTheTemplates compares the data-testid catalogue in
// doc.go with every id the site can write: the literal data-testid values
// of the templates, the ids the Go code hands them (a TestID field, a
// testID parameter) and the ones app.js adds. An id missing from the
// catalogue, or catalogued but written nowhere, fails the test.
func TestDocCatalogue_MatchesTheTemplates(t *testing.T) {
	catalogued := catalogueIDs(t)
	written := map[string]string{} // id → a file that writes it

	literal := regexp.MustCompile(`data-testid="([^"]*)"`)
	dynamic := regexp.MustCompile(`data-testid=\{([^}]*)\}`)
	templs := webFiles(t, ".templ") // web and its feature packages
	for _, file := range templs {
		src, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range literal.FindAllStringSubmatch(string(src), -1) {
			written[m[1]] = file
		}
		// A computed id must come from an actionLink, whose TestID values
		// the Go scan below collects.
		for _, m := range dynamic.FindAllStringSubmatch(string(src), -1) {
			if !strings.HasSuffix(strings.TrimSpace(m[1]), ".TestID") {
				t.Errorf("%s: data-testid={%s}: a computed id must be an actionLink's TestID, so that this test sees its values", file, m[1])
			}
		}
	}

	goFiles := webFiles(t, ".go")
	fset := token.NewFileSet()
	for _, file := range goFiles {
		if strings.HasSuffix(file, "_test.go") || strings.HasSuffix(file, "_templ.go") {
			continue
		}
		f, err := parser.ParseFile(fset, file, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range goTestIDs(f) {
			written[id] = file
		}
	}

	for _, script := range []string{"app.js", "playground.js", "workshop.js"} {
		js, err := os.ReadFile(filepath.Join("..", "static", script))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range regexp.MustCompile(`setAttribute\("data-testid", "([^"]*)"\)`).FindAllStringSubmatch(string(js), -1) {
			written[m[1]] = "static/" + script
		}
	}

	if len(written) < 50 {
		t.Fatalf("found only %d ids: the scan is broken", len(written))
	}
	for id, file := range written {
		if !catalogued[id] {
			t.Errorf("%s writes data-testid %q, which the catalogue in doc.go lacks", file, id)
		}
	}
	for id := range catalogued {
		if _, ok := written[id]; !ok {
			t.Errorf("doc.go catalogues data-testid %q, which nothing writes", id)
		}
	}
}

// catalogueIDs reads the catalogue: the indented "part: id id[attrs] …"
// lines of doc.go's "# Test ids" section.
func catalogueIDs(t *testing.T) map[string]bool {
	t.Helper()
	src, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	_, section, found := strings.Cut(string(src), "// # Test ids\n")
	if !found {
		t.Fatal(`doc.go has no "# Test ids" section`)
	}
	section, _, _ = strings.Cut(section, "\n// #")
	attrs := regexp.MustCompile(`\[[^\]]*\]`)
	ids := map[string]bool{}
	for line := range strings.SplitSeq(section, "\n") {
		entry, ok := strings.CutPrefix(line, "//\t")
		if !ok {
			continue
		}
		_, list, ok := strings.Cut(entry, ":")
		if !ok {
			t.Errorf("catalogue line %q: want part: ids", entry)
			continue
		}
		for _, id := range strings.Fields(attrs.ReplaceAllString(list, "")) {
			if ids[id] {
				t.Errorf("the catalogue lists %q twice", id)
			}
			ids[id] = true
		}
	}
	return ids
}

// goTestIDs finds the ids a Go file hands the templates: string literals
// given to a TestID field or to a parameter named testID, and data-testid
// attributes inside string literals (the fallback error page).
func goTestIDs(f *ast.File) []string {
	var ids []string
	unquote := func(e ast.Expr) {
		if lit, ok := e.(*ast.BasicLit); ok && lit.Kind == token.STRING {
			if s, err := strconv.Unquote(lit.Value); err == nil {
				ids = append(ids, s)
			}
		}
	}
	// Functions (declared, or literals bound to a name) with a testID
	// parameter, and its position.
	testIDParam := map[string]int{}
	params := func(name string, ft *ast.FuncType) {
		i := 0
		for _, field := range ft.Params.List {
			for _, n := range field.Names {
				if n.Name == "testID" {
					testIDParam[name] = i
				}
				i++
			}
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncDecl:
			params(n.Name.Name, n.Type)
		case *ast.AssignStmt:
			for i, rhs := range n.Rhs {
				if fl, ok := rhs.(*ast.FuncLit); ok && i < len(n.Lhs) {
					if id, ok := n.Lhs[i].(*ast.Ident); ok {
						params(id.Name, fl.Type)
					}
				}
			}
		}
		return true
	})
	attr := regexp.MustCompile(`data-testid="([^"]*)"`)
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.KeyValueExpr:
			if key, ok := n.Key.(*ast.Ident); ok && key.Name == "TestID" {
				unquote(n.Value)
			}
		case *ast.CallExpr:
			if fn, ok := n.Fun.(*ast.Ident); ok {
				if i, ok := testIDParam[fn.Name]; ok && i < len(n.Args) {
					unquote(n.Args[i])
				}
			}
		case *ast.BasicLit:
			for _, m := range attr.FindAllStringSubmatch(n.Value, -1) {
				ids = append(ids, m[1])
			}
		}
		return true
	})
	return slices.DeleteFunc(ids, func(id string) bool { return id == "" })
}

// webFiles are the files of package web and of the packages under it
// whose names end in ext, as paths relative to web/.
func webFiles(t *testing.T, ext string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == "testdata" {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(path, ext) {
			out = append(out, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
