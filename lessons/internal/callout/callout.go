// Package callout is a goldmark extension for GitHub-style callouts: a block
// quote whose first line is a marker such as `[!NOTE]`, `[!TIP]` or
// `[!WARNING]` becomes an <aside> with a title, instead of a quotation.
//
// It follows the hugo pattern: a node kind of its own, an AST transformer that
// turns matching block quotes into that node, and a node renderer that draws it.
package callout

import (
	"bytes"
	"regexp"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/renderer"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// Kinds maps each supported marker word to the title shown to the reader.
var Kinds = map[string]string{
	"NOTE":    "Note",
	"TIP":     "Tip",
	"WARNING": "Warning",
}

// KindCallout is the node kind of a Callout.
var KindCallout = ast.NewNodeKind("Callout")

// Callout is a block quote that starts with a `[!KIND]` marker line.
type Callout struct {
	ast.BaseBlock
	Marker string // "NOTE", "TIP" or "WARNING"
}

// Kind implements ast.Node.
func (*Callout) Kind() ast.NodeKind { return KindCallout }

// Dump implements ast.Node.
func (n *Callout) Dump(source []byte, level int) {
	ast.DumpHelper(n, source, level, map[string]string{"Marker": n.Marker}, nil)
}

// markerLine matches the whole first line of a callout: `[!WORD]` and
// nothing else. Words outside Kinds are left as block quotes, so a caller
// can report them as typos with MarkerWord.
var markerLine = regexp.MustCompile(`^\s*\[!([A-Za-z]+)\]\s*$`)

// MarkerWord returns the upper-cased word of a `[!WORD]` marker on the first
// line of a block quote, or "" when the quote has no marker.
func MarkerWord(quote *ast.Blockquote, source []byte) string {
	para, ok := quote.FirstChild().(*ast.Paragraph)
	if !ok || para.Lines().Len() == 0 {
		return ""
	}
	first := para.Lines().At(0)
	m := markerLine.FindSubmatch(first.Value(source))
	if m == nil {
		return ""
	}
	return string(bytes.ToUpper(m[1]))
}

type transformer struct{}

// Transform replaces each block quote that starts with a known marker by a
// Callout holding the quote's content without the marker line.
func (transformer) Transform(doc *ast.Document, reader text.Reader, _ parser.Context) {
	source := reader.Source()
	var quotes []*ast.Blockquote
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if q, ok := n.(*ast.Blockquote); ok && entering {
			quotes = append(quotes, q)
		}
		return ast.WalkContinue, nil
	})
	for _, q := range quotes {
		word := MarkerWord(q, source)
		if _, known := Kinds[word]; !known {
			continue
		}
		dropMarkerLine(q.FirstChild().(*ast.Paragraph))
		c := &Callout{Marker: word}
		for child := q.FirstChild(); child != nil; {
			next := child.NextSibling()
			c.AppendChild(c, child) // AppendChild detaches child from q first
			child = next
		}
		q.Parent().ReplaceChild(q.Parent(), q, c)
	}
}

// dropMarkerLine removes the inline nodes of the paragraph's first line, and
// the paragraph itself when the marker was all it held.
func dropMarkerLine(para *ast.Paragraph) {
	firstLineEnd := para.Lines().At(0).Stop
	for child := para.FirstChild(); child != nil; {
		next := child.NextSibling()
		t, ok := child.(*ast.Text)
		if !ok || t.Segment.Start >= firstLineEnd {
			break
		}
		para.RemoveChild(para, child)
		if t.SoftLineBreak() || t.HardLineBreak() {
			break
		}
		child = next
	}
	if para.ChildCount() == 0 {
		para.Parent().RemoveChild(para.Parent(), para)
	}
}

type nodeRenderer struct{}

// RegisterFuncs implements renderer.NodeRenderer.
func (nodeRenderer) RegisterFuncs(reg renderer.NodeRendererFuncRegisterer) {
	reg.Register(KindCallout, renderCallout)
}

// renderCallout writes an <aside> with role="note" (a callout is a note on
// the text, not complementary content) and a visible title, so screen readers
// announce what kind of remark follows.
func renderCallout(w util.BufWriter, _ []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	n := node.(*Callout)
	if entering {
		class := "callout callout-" + string(bytes.ToLower([]byte(n.Marker)))
		_, _ = w.WriteString(`<aside class="` + class + `" role="note">` + "\n")
		_, _ = w.WriteString(`<p class="callout-title">` + Kinds[n.Marker] + "</p>\n")
	} else {
		_, _ = w.WriteString("</aside>\n")
	}
	return ast.WalkContinue, nil
}

type extension struct{}

// New returns the callout extension.
func New() goldmark.Extender { return extension{} }

// Extend implements goldmark.Extender.
func (extension) Extend(m goldmark.Markdown) {
	// Priority 100 is ahead of most transformers, so later ones see Callouts.
	m.Parser().AddOptions(parser.WithASTTransformers(util.Prioritized(transformer{}, 100)))
	m.Renderer().AddOptions(renderer.WithNodeRenderers(util.Prioritized(nodeRenderer{}, 500)))
}
