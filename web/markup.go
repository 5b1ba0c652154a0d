package web

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
type markup struct{ b []byte }

var markupBuffers = sync.Pool{New: func() any { return &markup{b: make([]byte, 0, 16<<10)} }}

// markupComponent is a component that writes with draw.
func markupComponent(draw func(m *markup)) templ.Component {
	return templ.ComponentFunc(func(_ context.Context, w io.Writer) error {
		m := markupBuffers.Get().(*markup)
		m.b = m.b[:0]
		draw(m)
		_, err := w.Write(m.b)
		if cap(m.b) <= 256<<10 { // a rare huge diagram is not kept
			markupBuffers.Put(m)
		}
		return err
	})
}

// markupRender is a component that writes with draw, which may render
// templates into m (a rare part inside a hot one).
func markupRender(draw func(ctx context.Context, m *markup) error) templ.Component {
	return templ.ComponentFunc(func(ctx context.Context, w io.Writer) error {
		m := markupBuffers.Get().(*markup)
		m.b = m.b[:0]
		err := draw(ctx, m)
		if err == nil {
			_, err = w.Write(m.b)
		}
		if cap(m.b) <= 256<<10 {
			markupBuffers.Put(m)
		}
		return err
	})
}

// Write appends p: a template renders into m.
func (m *markup) Write(p []byte) (int, error) {
	m.b = append(m.b, p...)
	return len(p), nil
}

// raw appends markup as is: constant tags and attributes.
func (m *markup) raw(s string) { m.b = append(m.b, s...) }

// text appends s escaped for text or a quoted attribute value, as
// html.EscapeString escapes it, without building the escaped string.
func (m *markup) text(s string) { m.b = appendEscaped(m.b, s) }

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
func (m *markup) int(n int) { m.b = strconv.AppendInt(m.b, int64(n), 10) }

// int64 appends n in decimal.
func (m *markup) int64(n int64) { m.b = strconv.AppendInt(m.b, n, 10) }

// ints appends ns in decimal, separated by ", ".
func (m *markup) ints(ns []int64) {
	for i, n := range ns {
		if i > 0 {
			m.b = append(m.b, ", "...)
		}
		m.b = strconv.AppendInt(m.b, n, 10)
	}
}

// attr appends ` name="value"`, value escaped.
func (m *markup) attr(name, value string) {
	m.b = append(m.b, ' ')
	m.b = append(m.b, name...)
	m.b = append(m.b, `="`...)
	m.text(value)
	m.b = append(m.b, '"')
}

// intAttr appends ` name="n"`.
func (m *markup) intAttr(name string, n int) {
	m.b = append(m.b, ' ')
	m.b = append(m.b, name...)
	m.b = append(m.b, `="`...)
	m.int(n)
	m.b = append(m.b, '"')
}

// flag appends ` name` when on: a boolean attribute.
func (m *markup) flag(name string, on bool) {
	if on {
		m.b = append(m.b, ' ')
		m.b = append(m.b, name...)
	}
}
