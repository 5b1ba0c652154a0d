package lessons

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Problem is one thing wrong with a lesson, at a place the author can find.
type Problem struct {
	File string // as given to the author: Options.DisplayRoot joined with the file name
	Line int    // 1-based; 0 when the problem concerns the whole file or folder
	Msg  string
}

// Error formats the problem as "file:line: msg", the form editors and
// terminals turn into a link. Problem implements error so that directive and
// playground hooks can return one with a precise line.
func (p Problem) Error() string {
	if p.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", p.File, p.Line, p.Msg)
	}
	return p.File + ": " + p.Msg
}

// LoadError is every problem found while loading a course, sorted by file and
// line. Its Error is what `idemlab lint` prints and what stops a server start:
// one "file:line: msg" per line.
type LoadError struct {
	Problems []Problem
}

func (e *LoadError) Error() string {
	lines := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		lines[i] = p.Error()
	}
	return strings.Join(lines, "\n")
}

// FieldError lets a CheckPlayground hook blame one field of the spec
// ("scenario", "handlers", "script", "caption", "expect"), so that the
// problem points at that field's line rather than at the opening fence.
// "expect.HANDLER" blames one entry of expect; the message still reads
// "expect: …".
type FieldError struct {
	Field string
	Err   error
}

func (e *FieldError) Error() string {
	top, _, _ := strings.Cut(e.Field, ".")
	return top + ": " + e.Err.Error()
}
func (e *FieldError) Unwrap() error { return e.Err }

// problemsFromError turns an error returned by a hook into problems. Problems
// and *LoadError keep their own positions; a *FieldError is placed with
// lineOf; anything else lands on the fallback line. Joined errors are split.
func problemsFromError(err error, file string, fallbackLine int, lineOf func(field string) int) []Problem {
	if err == nil {
		return nil
	}
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		var out []Problem
		for _, e := range joined.Unwrap() {
			out = append(out, problemsFromError(e, file, fallbackLine, lineOf)...)
		}
		return out
	}
	var loadErr *LoadError
	if errors.As(err, &loadErr) {
		return loadErr.Problems
	}
	var p Problem
	if errors.As(err, &p) {
		if p.File == "" {
			p.File = file
		}
		return []Problem{p}
	}
	line := fallbackLine
	var fieldErr *FieldError
	if errors.As(err, &fieldErr) && lineOf != nil {
		if l := lineOf(fieldErr.Field); l > 0 {
			line = l
		}
	}
	return []Problem{{File: file, Line: line, Msg: err.Error()}}
}

// isYAMLParserError recognises the messages of yaml.v3's parser (parserc.go),
// whose line numbers, unlike its scanner's, start at 0.
func isYAMLParserError(msg string) bool {
	for _, prefix := range []string{"did not find expected", "found duplicate %", "found incompatible YAML document", "found undefined tag handle"} {
		if strings.HasPrefix(msg, prefix) {
			return true
		}
	}
	return false
}

var yamlLineError = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// yamlErrorPosition splits a yaml.v3 syntax error about src into the 1-based
// line inside src (1 when the error names none; at most the line after the
// last, where an error at the end of the text lands) and the message without
// the "yaml: line N:" prefix.
func yamlErrorPosition(err error, src []byte) (line int, msg string) {
	line, msg = yamlErrorLine(err)
	return min(line, bytes.Count(src, []byte("\n"))+1), msg
}

// yamlErrorLine reads the line yaml.v3 names in a syntax error.

func yamlErrorLine(err error) (line int, msg string) {
	text := err.Error()
	if m := yamlLineError.FindStringSubmatch(text); m != nil {
		n, convErr := strconv.Atoi(m[1])
		if convErr == nil && n > 0 {
			if isYAMLParserError(m[2]) {
				n++ // yaml.v3 counts lines from 0 for parser (not scanner) errors
			}
			return n, m[2]
		}
	}
	// yaml.v3 omits the line when it is the first one.
	return 1, strings.TrimPrefix(text, "yaml: ")
}
