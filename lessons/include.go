package lessons

import (
	"bytes"
	"fmt"
	"io/fs"
	"path"
	"strconv"
	"strings"
)

// includeRequest is the "include=PATH [lines=A-B]" part of a code fence's
// info string: show the file's text (or some of its lines) as the block, so
// that the code a lesson shows is the code a test compiled or ran.
type includeRequest struct {
	Path     string // relative to the lessons folder, slash-separated
	From, To int    // 1-based, inclusive; 0, 0 means the whole file; To 0 means to the end
}

// parseIncludeInfo reads the words after the language of a fence's info
// string. isInclude is false when there is no include= word: the block is an
// ordinary code block and its other words are none of our business.
func parseIncludeInfo(info string) (req includeRequest, isInclude bool, err error) {
	words := strings.Fields(info)
	for _, w := range words {
		if strings.HasPrefix(w, "include=") {
			isInclude = true
		}
	}
	if !isInclude {
		return req, false, nil
	}
	seen := map[string]bool{}
	for _, w := range words {
		key, value, _ := strings.Cut(w, "=")
		if seen[key] {
			return req, true, fmt.Errorf("%s= is given twice", key)
		}
		seen[key] = true
		switch key {
		case "include":
			p := path.Clean(value)
			if value == "" || strings.HasPrefix(value, "/") || !fs.ValidPath(p) || p == "." {
				return req, true, fmt.Errorf("include=%s: want a path inside the lessons folder, such as include=examples/NAME/main.go", value)
			}
			req.Path = p
		case "lines":
			from, to, err := parseLineRange(value)
			if err != nil {
				return req, true, fmt.Errorf("lines=%s: %v", value, err)
			}
			req.From, req.To = from, to
		default:
			return req, true, fmt.Errorf("unknown include option %q (want include=PATH and optionally lines=A-B)", w)
		}
	}
	return req, true, nil
}

// parseLineRange reads "A-B" (lines A to B), "A-" (A to the end) or "A".
func parseLineRange(s string) (from, to int, err error) {
	const want = "want A-B, A- or A, with 1 ≤ A ≤ B"
	a, b, dash := strings.Cut(s, "-")
	from, err = strconv.Atoi(a)
	if err != nil || from < 1 {
		return 0, 0, fmt.Errorf("%s", want)
	}
	switch {
	case !dash:
		return from, from, nil
	case b == "":
		return from, 0, nil
	}
	to, err = strconv.Atoi(b)
	if err != nil || to < from {
		return 0, 0, fmt.Errorf("%s", want)
	}
	return from, to, nil
}

// readInclude returns the requested text of the included file, ending in a
// newline.
func readInclude(fsys fs.FS, req includeRequest) (string, error) {
	data, err := fs.ReadFile(fsys, req.Path)
	if err != nil {
		return "", fmt.Errorf("include=%s: cannot read the file: %v", req.Path, unwrapPathError(err))
	}
	text := strings.TrimSuffix(string(normalizeNewlines(bytes.TrimPrefix(data, utf8BOM))), "\n")
	if strings.TrimSpace(text) == "" {
		return "", fmt.Errorf("include=%s: the file is empty", req.Path)
	}
	if req.From == 0 {
		return text + "\n", nil
	}
	lines := strings.Split(text, "\n")
	to := req.To
	if to == 0 {
		to = len(lines)
	}
	if req.From > len(lines) || to > len(lines) {
		return "", fmt.Errorf("include=%s lines=%d-%d: the file has only %d lines", req.Path, req.From, to, len(lines))
	}
	return strings.Join(lines[req.From-1:to], "\n") + "\n", nil
}

// unwrapPathError drops the operation and path from an *fs.PathError, which
// the message already names.
func unwrapPathError(err error) error {
	if pe, ok := err.(*fs.PathError); ok {
		return pe.Err
	}
	return err
}

// highlightCode renders code as a fenced block of lang through the lesson
// renderer, so that an included file looks exactly like code written inline.
func (l *loader) highlightCode(lang, code string) (string, error) {
	fence := strings.Repeat("`", max(3, longestRun(code, '`')+1))
	var out bytes.Buffer
	src := fence + lang + "\n" + code + fence + "\n"
	if err := l.md.Convert([]byte(src), &out); err != nil {
		return "", err
	}
	return out.String(), nil
}

// longestRun is the length of the longest run of c in s.
func longestRun(s string, c byte) int {
	longest, run := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	return longest
}
