package main

import (
	"bytes"
	"context"
	"go/parser"
	"go/token"
	"io"
	"os"
	"regexp"
	"strings"
	"testing"
)

// The manual: the package comment, the README, docs/ and the usage must
// name every command of the command table (cli.go) and every flag each one
// parses, and the examples they show must be true.

// commandFlags returns the flags a command really parses, read from what
// `idemlab NAME -h` prints.
func commandFlags(t *testing.T, name string) []string {
	t.Helper()
	var out bytes.Buffer
	if err := run(context.Background(), []string{name, "-h"}, &out, io.Discard); err != nil {
		t.Fatalf("idemlab %s -h: %v", name, err)
	}
	var flags []string
	for _, line := range strings.Split(out.String(), "\n") {
		if rest, ok := strings.CutPrefix(line, "  -"); ok {
			flags = append(flags, strings.Fields(rest)[0])
		}
	}
	return flags
}

// namesFlag reports whether text names -flag as a word of its own (not
// -flag-something).
func namesFlag(text, flag string) bool {
	return regexp.MustCompile(`(^|[^\w-])-` + regexp.QuoteMeta(flag) + `([^\w-]|$)`).MatchString(text)
}

// packageComment is main.go's package comment.
func packageComment(t *testing.T) string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "main.go", nil, parser.ParseComments|parser.PackageClauseOnly)
	if err != nil {
		t.Fatal(err)
	}
	if f.Doc == nil {
		t.Fatal("main.go has no package comment")
	}
	return f.Doc.Text()
}

func TestManual_NamesEveryCommandAndFlag(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	texts := map[string]string{
		"the package comment (main.go)": packageComment(t),
		"README.md":                     string(readme),
		"the usage":                     usageText(),
	}
	for _, c := range commands {
		if c.name == "help" {
			continue
		}
		flags := commandFlags(t, c.name)
		for where, text := range texts {
			if !strings.Contains(text, "idemlab "+c.name) && !(c.name == "serve" && strings.Contains(text, "idemlab [serve]")) {
				t.Errorf("%s does not name the command %q", where, c.name)
			}
			for _, f := range flags {
				if !namesFlag(text, f) {
					t.Errorf("%s does not name -%s of %s", where, f, c.name)
				}
			}
		}
		if c.name == "serve" {
			continue // its flags are listed apart, from its flag set
		}
		for _, f := range flags {
			if !namesFlag(c.args, f) {
				t.Errorf("the synopsis of %s in the command table does not name its flag -%s", c.name, f)
			}
		}
		for _, m := range regexp.MustCompile(`(?:^|[\s\[|])-([a-z][\w-]*)`).FindAllStringSubmatch(c.args, -1) {
			found := false
			for _, f := range flags {
				found = found || f == m[1]
			}
			if !found {
				t.Errorf("the synopsis of %s names -%s, which it does not parse", c.name, m[1])
			}
		}
	}
}
