package exercise

import (
	"strings"

	"github.com/alecthomas/chroma/v2"
)

// tokeniseHandler tokenises a handler script for the highlighter: its
// directive lines (@description, @why, @on …) are prose and names, never
// SQL, so an English word in them ("set", "on", "update") is not coloured
// as a keyword; the SQL between them goes to the SQL lexer.
func tokeniseHandler(lexer chroma.Lexer, src string) (chroma.Iterator, error) {
	var out []chroma.Token
	var sql strings.Builder
	flush := func() error {
		if sql.Len() == 0 {
			return nil
		}
		it, err := lexer.Tokenise(nil, sql.String())
		if err != nil {
			return err
		}
		out = append(out, it.Tokens()...)
		sql.Reset()
		return nil
	}
	for line := range strings.SplitAfterSeq(src, "\n") {
		trimmed := strings.TrimLeft(line, " \t")
		if !strings.HasPrefix(trimmed, "@") {
			sql.WriteString(line)
			continue
		}
		if err := flush(); err != nil {
			return nil, err
		}
		indent := line[:len(line)-len(trimmed)]
		name, rest, _ := strings.Cut(trimmed, " ")
		if rest == "" && strings.HasSuffix(name, "\n") {
			name, rest = strings.TrimSuffix(name, "\n"), "\n"
		} else if rest != "" {
			rest = " " + rest
		}
		if indent != "" {
			out = append(out, chroma.Token{Type: chroma.TextWhitespace, Value: indent})
		}
		out = append(out, chroma.Token{Type: chroma.NameDecorator, Value: name}, chroma.Token{Type: chroma.Text, Value: rest})
	}
	if err := flush(); err != nil {
		return nil, err
	}
	return chroma.Literator(out...), nil
}
