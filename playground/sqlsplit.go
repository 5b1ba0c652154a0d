package playground

import (
	"fmt"
	"strings"

	"modernc.org/libc"
	sqlite3 "modernc.org/sqlite/lib"
)

// SQLite splits a handler's statements, not a hand-written scanner: a
// quote inside a double-quoted identifier, a comment or a bracket must not
// hide a ';' from the engine while SQLite sees two statements. A statement
// ends where SQLite's own tokenizer (sqlite3_complete) says a statement is
// complete, and it is accepted only when nothing but whitespace and
// comments follows that end: what SQLite would prepare leaves an empty
// tail.

// sqlComplete reports whether text ends a complete SQL statement, as
// sqlite3_complete decides it (a ';' outside strings, identifiers and
// comments, followed only by whitespace and comments).
func sqlComplete(text string) bool {
	if strings.IndexByte(text, 0) >= 0 {
		return false
	}
	tls := libc.NewTLS()
	defer tls.Close()
	p, err := libc.CString(text)
	if err != nil {
		return false
	}
	defer libc.Xfree(tls, p)
	return sqlite3.Xsqlite3_complete(tls, p) != 0
}

// splitStatement takes the text of a complete statement and returns it
// without its terminating ';', or an error when SQLite would read a second
// statement after the first ';'.
func splitStatement(text string) (string, error) {
	for i := 0; i < len(text); i++ {
		if text[i] != ';' || !sqlComplete(text[:i+1]) {
			continue
		}
		if rest := stripSQLComments(text[i+1:]); rest != "" {
			return "", fmt.Errorf("one statement per step: SQLite reads %q as a second statement after the ';'; end each statement with ';' and start the next on a new line", clip(rest))
		}
		return strings.TrimSpace(text[:i]), nil
	}
	return "", fmt.Errorf("the statement does not end with ';'")
}

// stripSQLComments removes whitespace and SQL comments ("-- …" to the end
// of the line, "/* … */") and returns what is left.
func stripSQLComments(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch {
		case strings.HasPrefix(s[i:], "--"):
			j := strings.IndexByte(s[i:], '\n')
			if j < 0 {
				return strings.TrimSpace(b.String())
			}
			i += j
		case strings.HasPrefix(s[i:], "/*"):
			j := strings.Index(s[i+2:], "*/")
			if j < 0 {
				return strings.TrimSpace(b.String())
			}
			i += j + 3
		default:
			b.WriteByte(s[i])
		}
	}
	return strings.TrimSpace(b.String())
}

// sqlParams lists the parameters (":name", "@name", "$name", "?") that
// appear in a statement outside its strings, quoted identifiers and
// comments, in order, each once, with how it was written.
func sqlParams(s string) []string {
	var out []string
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\'' || c == '"' || c == '`':
			j := strings.IndexByte(s[i+1:], c)
			for j >= 0 && i+1+j+1 < len(s) && s[i+1+j+1] == c { // a doubled quote
				k := strings.IndexByte(s[i+1+j+2:], c)
				if k < 0 {
					j = -1
					break
				}
				j += 2 + k
			}
			if j < 0 {
				return out
			}
			i += j + 1
		case c == '[':
			j := strings.IndexByte(s[i:], ']')
			if j < 0 {
				return out
			}
			i += j
		case strings.HasPrefix(s[i:], "--"):
			j := strings.IndexByte(s[i:], '\n')
			if j < 0 {
				return out
			}
			i += j
		case strings.HasPrefix(s[i:], "/*"):
			j := strings.Index(s[i+2:], "*/")
			if j < 0 {
				return out
			}
			i += j + 3
		case c == ':' || c == '@' || c == '$' || c == '?':
			j := i + 1
			for j < len(s) && (s[j] == '_' || s[j] >= 'a' && s[j] <= 'z' || s[j] >= 'A' && s[j] <= 'Z' || s[j] >= '0' && s[j] <= '9') {
				j++
			}
			if p := s[i:j]; !contains(out, p) {
				out = append(out, p)
			}
			i = j - 1
		}
	}
	return out
}
