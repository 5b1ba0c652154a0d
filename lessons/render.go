package lessons

import (
	"bytes"
	"fmt"
	"html"
	"sort"
	"strings"

	chromahtml "github.com/alecthomas/chroma/v2/formatters/html"
	"github.com/alecthomas/chroma/v2/lexers"
	"github.com/yuin/goldmark"
	highlighting "github.com/yuin/goldmark-highlighting/v2"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/renderer"
	"github.com/yuin/goldmark/util"
	"go.abhg.dev/goldmark/frontmatter"

	"idemlab/lessons/internal/callout"
)

// newMarkdown builds the one goldmark configuration used for every lesson.
// Raw HTML stays disabled (no html.WithUnsafe): lesson text cannot inject
// markup or scripts, so the rendered HTML is safe to emit as is.
func newMarkdown() goldmark.Markdown {
	return goldmark.New(
		goldmark.WithExtensions(
			// GFM, with table alignment as align attributes: style attributes
			// would be blocked by a Content-Security-Policy without
			// 'unsafe-inline' styles.
			extension.NewTable(extension.WithTableCellAlignMethod(extension.TableCellAlignAttribute)),
			extension.Strikethrough,
			extension.TaskList,
			extension.Linkify,
			&frontmatter.Extender{Formats: []frontmatter.Format{yamlFrontMatter}},
			callout.New(),
			highlighting.NewHighlighting(
				highlighting.WithFormatOptions(chromahtml.WithClasses(true), chromahtml.WithPreWrapper(focusablePre{})),
				highlighting.WithGuessLanguage(false),
			),
		),
		goldmark.WithParserOptions(parser.WithAutoHeadingID()),
		goldmark.WithRendererOptions(
			renderer.WithNodeRenderers(util.Prioritized(lessonNodeRenderer{}, 100)),
		),
	)
}

// focusablePre opens highlighted code as a <pre> in the tab order: a long
// line scrolls it sideways, and a keyboard user must be able to scroll it.
type focusablePre struct{}

func (focusablePre) Start(code bool, styleAttr string) string {
	if code {
		return `<pre tabindex="0"` + styleAttr + `><code>`
	}
	return `<pre tabindex="0"` + styleAttr + `>`
}

func (focusablePre) End(code bool) string {
	if code {
		return "</code></pre>"
	}
	return "</pre>"
}

// blockMarker separates Body blocks in the rendered HTML. It cannot come from
// lesson text: with raw HTML off, goldmark escapes "<" in text and replaces
// raw HTML with a different comment.
const blockMarker = "<!--idemlab:block-->"

var kindDirective = ast.NewNodeKind("LessonDirective")

// directiveNode takes the place of a directive's fenced block in the AST:
// either inline HTML, or the marker where a Block of its own goes.
type directiveNode struct {
	ast.BaseBlock
	html  string
	block bool
}

func (*directiveNode) Kind() ast.NodeKind { return kindDirective }
func (n *directiveNode) Dump(source []byte, level int) {
	ast.DumpHelper(n, source, level, map[string]string{"block": fmt.Sprint(n.block)}, nil)
}

var kindHeadingAnchor = ast.NewNodeKind("HeadingAnchor")

// headingAnchor is the "#" link appended to h2/h3 headings.
type headingAnchor struct {
	ast.BaseInline
	id string
}

func (*headingAnchor) Kind() ast.NodeKind { return kindHeadingAnchor }
func (n *headingAnchor) Dump(source []byte, level int) {
	ast.DumpHelper(n, source, level, map[string]string{"id": n.id}, nil)
}

type lessonNodeRenderer struct{}

func (lessonNodeRenderer) RegisterFuncs(reg renderer.NodeRendererFuncRegisterer) {
	reg.Register(kindDirective, func(w util.BufWriter, _ []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
		n := node.(*directiveNode)
		if entering {
			if n.block {
				_, _ = w.WriteString(blockMarker)
			} else {
				_, _ = w.WriteString(n.html)
			}
		}
		return ast.WalkSkipChildren, nil
	})
	reg.Register(kindHeadingAnchor, func(w util.BufWriter, _ []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
		if entering {
			id := html.EscapeString(node.(*headingAnchor).id)
			_, _ = w.WriteString(` <a class="heading-anchor" href="#` + id + `" aria-label="Link to this section">#</a>`)
		}
		return ast.WalkSkipChildren, nil
	})
}

// lineIndex maps byte offsets of a file to 1-based line numbers.
type lineIndex []int // offsets at which lines start

func newLineIndex(src []byte) lineIndex {
	idx := lineIndex{0}
	for i, b := range src {
		if b == '\n' {
			idx = append(idx, i+1)
		}
	}
	return idx
}

func (idx lineIndex) line(offset int) int {
	return sort.Search(len(idx), func(i int) bool { return idx[i] > offset })
}

// nodeLine finds the file line of a node: its own text if it has any, else
// the first line of the nearest block around it.
func nodeLine(n ast.Node, idx lineIndex) int {
	offset := -1
	_ = ast.Walk(n, func(c ast.Node, entering bool) (ast.WalkStatus, error) {
		if t, ok := c.(*ast.Text); ok && entering {
			offset = t.Segment.Start
			return ast.WalkStop, nil
		}
		return ast.WalkContinue, nil
	})
	for p := n; offset < 0 && p != nil; p = p.Parent() {
		if p.Type() == ast.TypeBlock && p.Lines().Len() > 0 {
			offset = p.Lines().At(0).Start
		}
	}
	if offset < 0 {
		return 1
	}
	return idx.line(offset)
}

// plainText is a heading's text without markup, for the table of contents.
func plainText(n ast.Node, source []byte) string {
	var b strings.Builder
	_ = ast.Walk(n, func(c ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch t := c.(type) {
		case *ast.Text:
			b.Write(t.Segment.Value(source))
			if t.SoftLineBreak() {
				b.WriteByte(' ')
			}
		case *ast.String:
			b.Write(t.Value)
		}
		return ast.WalkContinue, nil
	})
	return strings.TrimSpace(b.String())
}

// renderBody walks the parsed lesson once — table of contents and heading
// anchors, lesson links, callout typos, directive blocks — then renders it
// and cuts the HTML into Blocks at the directive markers.
func (l *loader) renderBody(lesson *Lesson, doc ast.Node, source []byte, idx lineIndex) {
	var headings []*ast.Heading
	var links []*ast.Link
	var quotes []*ast.Blockquote
	var fences []*ast.FencedCodeBlock
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch n := n.(type) {
		case *ast.Heading:
			headings = append(headings, n)
		case *ast.Link:
			links = append(links, n)
		case *ast.Blockquote:
			quotes = append(quotes, n)
		case *ast.FencedCodeBlock:
			fences = append(fences, n)
		}
		return ast.WalkContinue, nil
	})

	ids := map[string]bool{}
	l.anchors[lesson.Slug] = ids
	for _, h := range headings {
		id, _ := h.AttributeString("id")
		idText, _ := id.([]byte)
		if len(idText) > 0 {
			ids[string(idText)] = true
		}
		if h.Level < 2 || h.Level > 3 || len(idText) == 0 {
			continue
		}
		lesson.TOC = append(lesson.TOC, Heading{Level: h.Level, ID: string(idText), Text: plainText(h, source)})
		h.AppendChild(h, &headingAnchor{id: string(idText)})
	}
	for _, link := range links {
		l.resolveLessonLink(lesson, link, idx)
	}
	for _, q := range quotes {
		if word := callout.MarkerWord(q, source); word != "" {
			l.problem(lesson.Path, nodeLine(q, idx), fmt.Sprintf("unknown callout [!%s] (want [!NOTE], [!TIP] or [!WARNING])", word))
		}
	}

	var blocks []Block // what directives produced as Blocks of their own
	counts := map[string]int{}
	for _, fence := range fences {
		if fence.Info == nil {
			continue
		}
		lang := string(fence.Language(source))
		fenceLine := idx.line(fence.Info.Segment.Start)
		info := strings.TrimSpace(strings.TrimPrefix(string(fence.Info.Segment.Value(source)), lang))
		if _, isDirective := l.directives[lang]; !isDirective {
			if html, isInclude := l.includeFence(lesson, fence, lang, info, fenceLine); isInclude {
				if html != "" {
					fence.Parent().ReplaceChild(fence.Parent(), fence, &directiveNode{html: html})
				}
				continue
			}
		}
		directive, ok := l.directives[lang]
		if !ok {
			if lang != "" && lexers.Get(lang) == nil {
				msg := fmt.Sprintf("unknown code block kind %q: not a directive (%s) nor a language the highlighter knows", lang, keyList(l.directiveKinds()))
				if guess := closestWord(lang, l.directiveKinds()); guess != "" {
					msg = fmt.Sprintf("unknown code block kind %q: did you mean %q?", lang, guess)
				}
				l.problem(lesson.Path, fenceLine, msg)
			}
			continue
		}
		counts[lang]++
		var body bytes.Buffer
		for i := 0; i < fence.Lines().Len(); i++ {
			seg := fence.Lines().At(i)
			body.Write(seg.Value(source))
		}
		src := &DirectiveSource{
			Kind:   lang,
			Info:   info,
			Body:   body.Bytes(),
			File:   lesson.Path,
			Line:   fenceLine,
			Index:  counts[lang],
			Lesson: lesson.Slug,
			FS:     l.fsys,
		}
		out, err := l.parseDirective(directive, src)
		if err != nil {
			l.problems = append(l.problems, problemsFromError(err, lesson.Path, fenceLine, nil)...)
			continue
		}
		node := &directiveNode{html: out.HTML, block: out.Value != nil}
		switch {
		case node.block:
			block, err := blockOf(lang, out.Value)
			if err != nil {
				l.problem(lesson.Path, fenceLine, err.Error())
				continue
			}
			if _, top := fence.Parent().(*ast.Document); !top {
				l.problem(lesson.Path, fenceLine, fmt.Sprintf("a ```%s block must be at the top level of the lesson, not inside a list or quote", lang))
				continue
			}
			if spec, ok := out.Value.(*ExerciseSpec); ok {
				l.checkLeadIn(lesson, spec, fence, source, idx)
			}
			blocks = append(blocks, block)
		case out.HTML == "":
			l.problem(lesson.Path, fenceLine, fmt.Sprintf("```%s: the block produced nothing to show", lang))
			continue
		}
		fence.Parent().ReplaceChild(fence.Parent(), fence, node)
	}

	var rendered bytes.Buffer
	if err := l.md.Renderer().Render(&rendered, source, doc); err != nil {
		l.problem(lesson.Path, 0, "cannot render: "+err.Error())
		return
	}
	parts := strings.Split(rendered.String(), blockMarker)
	for i, part := range parts {
		if strings.TrimSpace(part) != "" {
			lesson.Body = append(lesson.Body, Block{HTML: part})
		}
		if i < len(blocks) {
			b := blocks[i]
			lesson.Body = append(lesson.Body, b)
			if b.Playground != nil {
				lesson.Playgrounds = append(lesson.Playgrounds, b.Playground)
			}
			if b.Exercise != nil {
				lesson.Exercises = append(lesson.Exercises, b.Exercise)
			}
		}
	}
}

// includeFence handles a code fence whose info string holds include=PATH:
// it returns the highlighted file, or "" after recording a problem.
// isInclude is false for an ordinary code block.
func (l *loader) includeFence(lesson *Lesson, fence *ast.FencedCodeBlock, lang, info string, fenceLine int) (html string, isInclude bool) {
	req, isInclude, err := parseIncludeInfo(info)
	if !isInclude {
		return "", false
	}
	if err == nil && lexers.Get(lang) == nil {
		err = fmt.Errorf("include: unknown language %q: write the fence as ```go include=PATH or ```sql include=PATH", lang)
	}
	if err == nil && fence.Lines().Len() > 0 {
		err = fmt.Errorf("include=%s: the block must be empty, the file's text takes its place", req.Path)
	}
	var code string
	if err == nil {
		code, err = readInclude(l.fsys, req)
	}
	if err == nil {
		html, err = l.highlightCode(lang, code)
	}
	if err != nil {
		l.problem(lesson.Path, fenceLine, err.Error())
		return "", true
	}
	return html, true
}

// parseDirective runs a directive's Parse, turning a panic in third-party
// directive code into a problem rather than a crashed server.
func (l *loader) parseDirective(d Directive, src *DirectiveSource) (out DirectiveOutput, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("```%s directive failed: %v", src.Kind, r)
		}
	}()
	return d.Parse(src)
}

// resolveLessonLink checks a link that points at another lesson (other.md,
// 02-other.md, /lessons/other) and rewrites the .md forms to /lessons/slug;
// links with a #fragment are checked against the target's headings later.
func (l *loader) resolveLessonLink(lesson *Lesson, link *ast.Link, idx lineIndex) {
	dest := string(link.Destination)
	target, isLesson, ok := l.lessonLinkTarget(dest)
	switch {
	case strings.HasPrefix(dest, "#"):
		l.rememberFragment(lesson.Path, nodeLine(link, idx), dest, "/lessons/"+lesson.Slug+dest)
	case !isLesson:
	case !ok:
		l.problem(lesson.Path, nodeLine(link, idx), fmt.Sprintf("link to %q: there is no lesson %q", dest, target))
	default:
		link.Destination = []byte(target)
		l.rememberFragment(lesson.Path, nodeLine(link, idx), dest, target)
	}
}

// rememberFragment records a link to /lessons/slug#fragment, or to #fragment
// within the lesson, for checking once every lesson's headings are known.
func (l *loader) rememberFragment(file string, line int, dest, target string) {
	page, fragment, found := strings.Cut(target, "#")
	if !found || fragment == "" {
		return
	}
	l.fragments = append(l.fragments, fragmentLink{file: file, line: line, dest: dest, slug: strings.TrimPrefix(page, "/lessons/"), fragment: fragment})
}

// checkLeadIn holds the paragraph before an exercise (its lead-in) to the
// exercise's bounds: a number of events or workers, or a fault, that no
// set of bounds checks is a problem on the paragraph's line, since the
// card below it says otherwise (playground.Exercise.LeadInContradiction).
func (l *loader) checkLeadIn(lesson *Lesson, spec *ExerciseSpec, fence *ast.FencedCodeBlock, source []byte, idx lineIndex) {
	para, ok := fence.PreviousSibling().(*ast.Paragraph)
	if !ok || para.Lines().Len() == 0 {
		return
	}
	var text strings.Builder
	for i := 0; i < para.Lines().Len(); i++ {
		seg := para.Lines().At(i)
		text.Write(seg.Value(source))
		text.WriteByte(' ')
	}
	if msg := spec.LeadInContradiction(text.String()); msg != "" {
		l.problem(lesson.Path, idx.line(para.Lines().At(0).Start), fmt.Sprintf("exercise %s: %s", spec.ID, msg))
	}
}
