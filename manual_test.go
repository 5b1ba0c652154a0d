package main

import (
	"bytes"
	"context"
	"fmt"
	"go/parser"
	"go/token"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode"
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

// manualFiles are the pages of the manual: the README and docs/*.md.
func manualFiles(t *testing.T) []string {
	t.Helper()
	docs, err := filepath.Glob("docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	return append([]string{"README.md"}, docs...)
}

// fencedBlock is a fenced code block of a markdown file.
type fencedBlock struct {
	file  string
	line  int    // of the opening fence, 1-based
	info  string // "console", "console postgres", "sh"…
	lines []string
}

func (b fencedBlock) String() string { return fmt.Sprintf("%s:%d", b.file, b.line) }

// language is the first word of the block's info string.
func (b fencedBlock) language() string {
	lang, _, _ := strings.Cut(b.info, " ")
	return lang
}

// readMarkdown returns a file's lines outside fenced blocks (blanked inside
// them, so that line numbers hold) and its fenced blocks. A fence closes on a
// line of at least as many backticks as opened it, as CommonMark says.
func readMarkdown(t *testing.T, file string) (prose []string, blocks []fencedBlock) {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var open *fencedBlock
	var fence string
	for i, line := range strings.Split(string(data), "\n") {
		trimmed := strings.TrimSpace(line)
		if open != nil {
			if strings.HasPrefix(trimmed, fence) && strings.Trim(trimmed, "`") == "" {
				blocks = append(blocks, *open)
				open = nil
			} else {
				open.lines = append(open.lines, line)
			}
			prose = append(prose, "")
			continue
		}
		if strings.HasPrefix(trimmed, "```") {
			n := len(trimmed) - len(strings.TrimLeft(trimmed, "`"))
			fence = trimmed[:n]
			open = &fencedBlock{file: file, line: i + 1, info: strings.TrimSpace(trimmed[n:])}
			prose = append(prose, "")
			continue
		}
		prose = append(prose, line)
	}
	if open != nil {
		t.Errorf("%s: the fence is never closed", open)
	}
	return prose, blocks
}

// shellWords splits a command line as a POSIX shell would for the simple
// lines the manual shows: quotes, backslashes, and with expand, $VAR and
// ${VAR} outside single quotes.
func shellWords(line string, expand bool) ([]string, error) {
	var words []string
	var word strings.Builder
	inWord := false
	var quote rune
	rs := []rune(line)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case quote == '\'':
			if r == '\'' {
				quote = 0
			} else {
				word.WriteRune(r)
			}
		case r == '$' && expand && quote != '\'':
			j := i + 1
			braced := j < len(rs) && rs[j] == '{'
			if braced {
				j++
			}
			k := j
			for k < len(rs) && (rs[k] == '_' || unicode.IsLetter(rs[k]) || unicode.IsDigit(rs[k])) {
				k++
			}
			word.WriteString(os.Getenv(string(rs[j:k])))
			if braced {
				k++
			}
			i = k - 1
			inWord = true
		case quote == '"':
			if r == '"' {
				quote = 0
			} else if r == '\\' && i+1 < len(rs) && strings.ContainsRune(`"\$`, rs[i+1]) {
				i++
				word.WriteRune(rs[i])
			} else {
				word.WriteRune(r)
			}
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == '\\' && i+1 < len(rs):
			i++
			word.WriteRune(rs[i])
			inWord = true
		case unicode.IsSpace(r):
			if inWord {
				words = append(words, word.String())
				word.Reset()
				inWord = false
			}
		default:
			word.WriteRune(r)
			inWord = true
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("unclosed %c", quote)
	}
	if inWord {
		words = append(words, word.String())
	}
	return words, nil
}

// idemlabArgs returns the arguments of an idemlab command line ("idemlab
// …" or "go run . …"), and false for any other command.
func idemlabArgs(words []string) ([]string, bool) {
	switch {
	case len(words) >= 1 && words[0] == "idemlab":
		return words[1:], true
	case len(words) >= 3 && words[0] == "go" && words[1] == "run" && words[2] == ".":
		return words[3:], true
	}
	return nil, false
}

// joinContinuations joins lines that end in a backslash with the next.
func joinContinuations(lines []string) []string {
	var out []string
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		for strings.HasSuffix(line, "\\") && i+1 < len(lines) {
			i++
			line = strings.TrimSuffix(line, "\\") + " " + strings.TrimSpace(lines[i])
		}
		out = append(out, line)
	}
	return out
}

// matchesShown reports whether a line of output matches a line the manual
// shows, in which ⋯ stands for any text.
func matchesShown(got, shown string) bool {
	parts := strings.Split(shown, "⋯")
	for i := range parts {
		parts[i] = regexp.QuoteMeta(parts[i])
	}
	return regexp.MustCompile(`^` + strings.Join(parts, `.*`) + `$`).MatchString(got)
}

// consoleExample is one "$ command" of a console block and the output shown
// under it.
type consoleExample struct {
	command string
	output  []string
}

func consoleExamples(b fencedBlock) []consoleExample {
	var examples []consoleExample
	lines := b.lines
	for i := 0; i < len(lines); i++ {
		if !strings.HasPrefix(lines[i], "$ ") {
			if len(examples) > 0 {
				last := &examples[len(examples)-1]
				last.output = append(last.output, lines[i])
			}
			continue
		}
		cmd := strings.TrimPrefix(lines[i], "$ ")
		for strings.HasSuffix(cmd, "\\") && i+1 < len(lines) {
			i++
			cmd = strings.TrimSuffix(cmd, "\\") + " " + strings.TrimSpace(lines[i])
		}
		examples = append(examples, consoleExample{command: cmd})
	}
	for i := range examples {
		out := examples[i].output
		for len(out) > 0 && strings.TrimSpace(out[len(out)-1]) == "" {
			out = out[:len(out)-1]
		}
		examples[i].output = out
	}
	return examples
}

// TestManual_ConsoleExamplesAreTrue runs every console block of the manual
// through run, as a lesson's examples are run, and compares the output
// shown. A block marked "console postgres" needs IDEMLAB_TEST_DATABASE.
func TestManual_ConsoleExamplesAreTrue(t *testing.T) {
	for _, file := range manualFiles(t) {
		_, blocks := readMarkdown(t, file)
		for _, b := range blocks {
			if b.language() != "console" {
				continue
			}
			t.Run(b.String(), func(t *testing.T) {
				if strings.Contains(b.info, "postgres") && os.Getenv("IDEMLAB_TEST_DATABASE") == "" {
					t.Skip("a PostgreSQL example: set IDEMLAB_TEST_DATABASE to run it (see docs/testing.md)")
				}
				examples := consoleExamples(b)
				if len(examples) == 0 {
					t.Fatal("a console block without a $ command")
				}
				for _, ex := range examples {
					words, err := shellWords(ex.command, true)
					if err != nil {
						t.Fatalf("%s: %v", ex.command, err)
					}
					args, ok := idemlabArgs(words)
					if !ok {
						t.Fatalf("%s: a console block runs idemlab or go run . only; show other commands in an sh block", ex.command)
					}
					ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
					var stdout, stderr bytes.Buffer
					err = run(ctx, args, &stdout, &stderr)
					cancel()
					wantFailure := false
					for _, line := range ex.output {
						wantFailure = wantFailure || strings.HasPrefix(line, "idemlab: ")
					}
					if err != nil && !wantFailure {
						t.Fatalf("%s: %v\n%s", ex.command, err, stderr.String())
					}
					if err == nil && wantFailure {
						t.Fatalf("%s succeeded; the manual shows it failing", ex.command)
					}
					if len(ex.output) == 0 {
						continue
					}
					got := strings.Split(strings.TrimRight(stdout.String()+stderr.String(), "\n"), "\n")
					for i := 0; i < len(got) || i < len(ex.output); i++ {
						var g, w string
						if i < len(got) {
							g = strings.TrimRight(got[i], " ")
						}
						if i < len(ex.output) {
							w = strings.TrimRight(ex.output[i], " ")
						}
						if i >= len(got) || i >= len(ex.output) || !matchesShown(g, w) {
							t.Errorf("%s: line %d of its output differs from the manual's\n got: %q\nshown: %q\nwhole output:\n%s",
								ex.command, i+1, g, w, strings.Join(got, "\n"))
							break
						}
					}
				}
			})
		}
	}
}

// flagsIn returns the flag names a command line or synopsis uses: words
// starting with a dash and a letter, brackets and "=value" removed.
func flagsIn(words []string) []string {
	var flags []string
	for _, w := range words {
		w = strings.Trim(w, "[]|")
		if m := regexp.MustCompile(`^--?([a-z][\w-]*)`).FindStringSubmatch(w); m != nil {
			flags = append(flags, m[1])
		}
	}
	return flags
}

// TestManual_CommandLinesAreReal checks every idemlab command line of the
// manual's sh blocks, and every synopsis of its text blocks: a command of
// the table, flags that command parses.
func TestManual_CommandLinesAreReal(t *testing.T) {
	known := map[string][]string{}
	for _, c := range commands {
		if c.name != "help" {
			known[c.name] = commandFlags(t, c.name)
		}
	}
	known["help"] = nil
	check := func(where string, args []string) {
		name := "serve"
		if len(args) > 0 && !strings.HasPrefix(args[0], "-") && !strings.HasPrefix(args[0], "[") {
			name, args = args[0], args[1:]
		}
		if name == "[serve]" {
			name = "serve"
		}
		flags, ok := known[name]
		if !ok {
			t.Errorf("%s: %q is not a command of idemlab", where, name)
			return
		}
		for _, f := range flagsIn(args) {
			if !slices.Contains(flags, f) {
				t.Errorf("%s: idemlab %s has no flag -%s", where, name, f)
			}
		}
	}
	for _, file := range manualFiles(t) {
		_, blocks := readMarkdown(t, file)
		for _, b := range blocks {
			switch b.language() {
			case "sh", "bash":
				for i, line := range joinContinuations(b.lines) {
					for _, part := range strings.Split(line, "&&") {
						part = strings.TrimSuffix(strings.TrimSpace(part), "&")
						if part == "" || strings.HasPrefix(part, "#") {
							continue
						}
						words, err := shellWords(part, false)
						if err != nil {
							t.Errorf("%s, line %d: %v", b, i+1, err)
							continue
						}
						if args, ok := idemlabArgs(words); ok {
							check(fmt.Sprintf("%s: %s", b, part), args)
						}
					}
				}
			case "text":
				// A synopsis: "idemlab NAME [flags…]", continued on indented lines.
				var args []string
				flush := func() {
					if args != nil {
						check(b.String(), args)
					}
					args = nil
				}
				for _, line := range b.lines {
					if rest, ok := strings.CutPrefix(line, "idemlab "); ok {
						flush()
						synopsis, _, _ := strings.Cut(rest, "   ") // the description follows a gap
						args = strings.Fields(synopsis)
						continue
					}
					if args != nil && strings.HasPrefix(line, " ") {
						continuation := strings.TrimSpace(line)
						if strings.HasPrefix(continuation, "[") {
							args = append(args, strings.Fields(continuation)...)
						}
					}
				}
				flush()
			}
		}
	}
}

// githubSlug is the anchor GitHub gives a heading.
func githubSlug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteRune('-')
		}
	}
	return b.String()
}

// anchors returns the anchors of a markdown file's headings, numbered as
// GitHub numbers repeated ones.
func anchors(t *testing.T, file string) map[string]bool {
	prose, _ := readMarkdown(t, file)
	seen := map[string]int{}
	out := map[string]bool{}
	for _, line := range prose {
		if !strings.HasPrefix(line, "#") {
			continue
		}
		heading := strings.TrimSpace(strings.TrimLeft(line, "#"))
		slug := githubSlug(heading)
		if n := seen[slug]; n > 0 {
			out[fmt.Sprintf("%s-%d", slug, n)] = true
		} else {
			out[slug] = true
		}
		seen[slug]++
	}
	return out
}

// withoutCodeSpans blanks `code spans`, whose brackets are not links.
func withoutCodeSpans(line string) string {
	var b strings.Builder
	for i := 0; i < len(line); {
		if line[i] != '`' {
			b.WriteByte(line[i])
			i++
			continue
		}
		n := 1
		for i+n < len(line) && line[i+n] == '`' {
			n++
		}
		fence := line[i : i+n]
		end := strings.Index(line[i+n:], fence)
		if end < 0 {
			b.WriteString(line[i:])
			break
		}
		i += n + end + n
	}
	return b.String()
}

var markdownLink = regexp.MustCompile(`\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)

// TestManual_LinksResolve checks that every relative link of the manual
// names a file that exists, and every #anchor a heading of its page; that
// every picture in docs/ is shown somewhere; and that the README stays the
// front door, not the whole manual.
func TestManual_LinksResolve(t *testing.T) {
	linked := map[string]bool{}
	for _, file := range manualFiles(t) {
		prose, _ := readMarkdown(t, file)
		for i, line := range prose {
			for _, m := range markdownLink.FindAllStringSubmatch(withoutCodeSpans(line), -1) {
				target := m[1]
				if regexp.MustCompile(`^[a-z]+:`).MatchString(target) {
					continue // http:, https:, mailto:
				}
				where := fmt.Sprintf("%s:%d: %s", file, i+1, target)
				path, anchor, _ := strings.Cut(target, "#")
				dest := file
				if path != "" {
					dest = filepath.Join(filepath.Dir(file), path)
					if _, err := os.Stat(dest); err != nil {
						t.Errorf("%s: no such file", where)
						continue
					}
				}
				linked[filepath.Clean(dest)] = true
				if anchor != "" {
					if !strings.HasSuffix(dest, ".md") {
						t.Errorf("%s: an anchor in a file that is not markdown", where)
					} else if !anchors(t, dest)[anchor] {
						t.Errorf("%s: %s has no heading whose anchor is #%s", where, dest, anchor)
					}
				}
			}
		}
	}
	pictures, _ := filepath.Glob("docs/*.png")
	for _, p := range pictures {
		if !linked[filepath.Clean(p)] {
			t.Errorf("%s is shown nowhere in the README or docs/: show it or delete it", p)
		}
	}
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(readme), "\n"); n > 450 {
		t.Errorf("README.md has %d lines; the front door stays within 450, the rest goes to docs/", n)
	}
}
