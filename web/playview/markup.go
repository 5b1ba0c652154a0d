package playview

import (
	"context"
	"io"
	"strconv"
	"sync"

	"github.com/a-h/templ"
)

// markup writes HTML for the few panels drawn on every click whose
// elements repeat per step (the sequence diagram's SVG): templ resolves
// every attribute expression through an interface (an allocation each)
// and prints numbers with strconv.Itoa, which made the diagram a fifth of
// a click's allocations. markup appends to one pooled buffer instead. It
// escapes exactly as templ does (html.EscapeString; TestMarkup_EscapesAsTempl),
// and the diagram's bytes were compared with its template's, for every
// scenario's default script at every cursor, when it moved here.
type Markup struct{ B []byte }

var markupBuffers = sync.Pool{New: func() any { return &Markup{B: make([]byte, 0, 16<<10)} }}

// markupComponent is a component that writes with draw.
func markupComponent(draw func(m *Markup)) templ.Component {
	return templ.ComponentFunc(func(_ context.Context, w io.Writer) error {
		m := markupBuffers.Get().(*Markup)
		m.B = m.B[:0]
		draw(m)
		_, err := w.Write(m.B)
		if cap(m.B) <= 256<<10 { // a rare huge diagram is not kept
			markupBuffers.Put(m)
		}
		return err
	})
}

// markupRender is a component that writes with draw, which may render
// templates into m (a rare part inside a hot one).
func markupRender(draw func(ctx context.Context, m *Markup) error) templ.Component {
	return templ.ComponentFunc(func(ctx context.Context, w io.Writer) error {
		m := markupBuffers.Get().(*Markup)
		m.B = m.B[:0]
		err := draw(ctx, m)
		if err == nil {
			_, err = w.Write(m.B)
		}
		if cap(m.B) <= 256<<10 {
			markupBuffers.Put(m)
		}
		return err
	})
}

// Write appends p: a template renders into m.
func (m *Markup) Write(p []byte) (int, error) {
	m.B = append(m.B, p...)
	return len(p), nil
}

// raw appends markup as is: constant tags and attributes.
func (m *Markup) Raw(s string) { m.B = append(m.B, s...) }

// text appends s escaped for text or a quoted attribute value, as
// html.EscapeString escapes it, without building the escaped string.
func (m *Markup) Text(s string) { m.B = appendEscaped(m.B, s) }

// appendEscaped appends s to b with &, <, >, ' and " escaped as
// html.EscapeString escapes them.
func appendEscaped(b []byte, s string) []byte {
	last := 0
	for i := 0; i < len(s); i++ {
		var esc string
		switch s[i] {
		case '<':
			esc = "&lt;"
		case '>':
			esc = "&gt;"
		case '&':
			esc = "&amp;"
		case '\'':
			esc = "&#39;"
		case '"':
			esc = "&#34;"
		default:
			continue
		}
		b = append(b, s[last:i]...)
		b = append(b, esc...)
		last = i + 1
	}
	return append(b, s[last:]...)
}

// int appends n in decimal.
func (m *Markup) int(n int) { m.B = strconv.AppendInt(m.B, int64(n), 10) }

// int64 appends n in decimal.
func (m *Markup) int64(n int64) { m.B = strconv.AppendInt(m.B, n, 10) }

// ints appends ns in decimal, separated by ", ".
func (m *Markup) ints(ns []int64) {
	for i, n := range ns {
		if i > 0 {
			m.B = append(m.B, ", "...)
		}
		m.B = strconv.AppendInt(m.B, n, 10)
	}
}

// attr appends ` name="value"`, value escaped.
func (m *Markup) Attr(name, value string) {
	m.B = append(m.B, ' ')
	m.B = append(m.B, name...)
	m.B = append(m.B, `="`...)
	m.Text(value)
	m.B = append(m.B, '"')
}

// intAttr appends ` name="n"`.
func (m *Markup) IntAttr(name string, n int) {
	m.B = append(m.B, ' ')
	m.B = append(m.B, name...)
	m.B = append(m.B, `="`...)
	m.int(n)
	m.B = append(m.B, '"')
}

// flag appends ` name` when on: a boolean attribute.
func (m *Markup) Flag(name string, on bool) {
	if on {
		m.B = append(m.B, ' ')
		m.B = append(m.B, name...)
	}
}
