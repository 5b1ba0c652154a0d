package lessons

import (
	"bytes"
	"fmt"
	"net/url"
	"path"
	"strings"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/text"
	"gopkg.in/yaml.v3"
)

// QuizItem is one question of a ```quiz block: its text rendered to
// inline HTML and its graded choices (see Choice).
type QuizItem struct {
	Question string // inline HTML: the legend of the choices
	Choices  []Choice
}

// quizKeys are the keys a quiz item may hold.
var quizKeys = []string{"q", "choices"}

// quizDirective is the built-in ```quiz directive: a YAML list of
// questions, each with q (one paragraph) and choices (see Choice), rendered
// in place as a "check yourself" list of radio groups: picking a choice
// shows why it is right or wrong. Markdown is rendered like the lesson's
// (raw HTML off), and lesson links in it are checked and rewritten.
func (l *loader) quizDirective() Directive {
	return Directive{
		Kind: "quiz",
		Parse: func(src *DirectiveSource) (DirectiveOutput, error) {
			items, err := l.parseQuiz(src)
			if err != nil {
				return DirectiveOutput{}, err
			}
			return DirectiveOutput{HTML: quizHTML(fmt.Sprintf("quiz-%d", src.Index), items)}, nil
		},
	}
}

// parseQuiz validates a quiz block and renders its items; every problem is
// reported with its own line.
func (l *loader) parseQuiz(src *DirectiveSource) ([]QuizItem, error) {
	body := normalizeNewlines(src.Body)
	lastLine := bytes.Count(body, []byte("\n")) + 1
	var problems []Problem
	bad := func(yamlLine int, msg string) {
		problems = append(problems, src.Problem(min(max(yamlLine, 1), lastLine), "quiz: %s", msg))
	}
	const want = "a YAML list of questions, each with q: (the question) and choices: (the answers to pick from)"
	root, err := parseYAMLNode(body)
	switch {
	case err != nil:
		line, msg := yamlErrorPosition(err, body)
		bad(line, "invalid YAML: "+msg)
	case root == nil || (root.Kind == yaml.ScalarNode && root.ShortTag() == "!!null"):
		problems = append(problems, Problem{File: src.File, Line: src.Line, Msg: "quiz: the block is empty: want " + want})
	case root.Kind != yaml.SequenceNode:
		bad(root.Line, "want "+want+", not "+describeYAML(root))
	}
	if len(problems) > 0 {
		return nil, &LoadError{Problems: problems}
	}
	render := func(markdown string, yamlLine int) (string, bool) {
		rendered, linkProblems := l.renderInline("quiz", markdown, src, yamlLine)
		problems = append(problems, linkProblems...)
		return singleParagraph(rendered)
	}
	var items []QuizItem
	for i, node := range root.Content {
		node = resolveAlias(node)
		who := fmt.Sprintf("question %d", i+1)
		if node.Kind != yaml.MappingNode {
			bad(node.Line, fmt.Sprintf("%s: want a mapping with q: and choices:, not %s", who, describeYAML(node)))
			continue
		}
		var item QuizItem
		found := map[string]bool{}
		for _, f := range mappingFields(node, src.Line, bad) {
			found[f.Key] = true
			switch f.Key {
			case "q":
				value, msg := stringValue(f.Key, f.Value)
				if msg != "" {
					bad(f.Line, who+": "+msg)
					continue
				}
				inline, ok := render(value, f.Value.Line)
				if !ok {
					bad(f.Line, who+": q must be one paragraph of text")
				}
				item.Question = inline
			case "choices":
				item.Choices = parseChoices(f.Value, src.Line, who, false, render, bad)
			case "a":
				bad(f.Line, who+": a: is the old reveal-only answer; give choices: instead, each with choice:, why: and one correct: true")
			default:
				bad(f.Line, who+": "+unknownWord("key", f.Key, quizKeys))
			}
		}
		for _, key := range quizKeys {
			if !found[key] {
				bad(node.Line, fmt.Sprintf("%s: missing %q", who, key))
			}
		}
		items = append(items, item)
	}
	if len(items) == 0 && len(problems) == 0 {
		problems = append(problems, Problem{File: src.File, Line: src.Line, Msg: "quiz: the list is empty: want " + want})
	}
	if len(problems) > 0 {
		return nil, &LoadError{Problems: problems}
	}
	return items, nil
}

// renderInline renders the markdown of a block's text (a question, an
// answer, a goal's task) with the lesson's renderer (raw HTML off),
// checking and rewriting lesson links; what names the block in problems.
func (l *loader) renderInline(what, markdown string, src *DirectiveSource, yamlLine int) (string, []Problem) {
	source := []byte(markdown)
	doc := l.md.Parser().Parse(text.NewReader(source))
	var problems []Problem
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		link, ok := n.(*ast.Link)
		if !ok || !entering {
			return ast.WalkContinue, nil
		}
		dest := string(link.Destination)
		if target, isLesson, ok := l.lessonLinkTarget(dest); isLesson {
			if !ok {
				problems = append(problems, src.Problem(yamlLine, "%s: link to %q: there is no lesson %q", what, dest, target))
			} else {
				link.Destination = []byte(target)
				l.rememberFragment(src.File, src.Line+yamlLine, dest, target)
			}
		}
		return ast.WalkContinue, nil
	})
	var out bytes.Buffer
	if err := l.md.Renderer().Render(&out, source, doc); err != nil {
		problems = append(problems, src.Problem(yamlLine, "%s: cannot render: %v", what, err))
	}
	return out.String(), problems
}

// lessonLinkTarget recognises a link to another lesson (other.md,
// 02-other.md, /lessons/other). For one, it returns the URL to link to and
// ok, or the missing slug and !ok.
func (l *loader) lessonLinkTarget(dest string) (target string, isLesson, ok bool) {
	u, err := url.Parse(dest)
	if err != nil || u.Scheme != "" || u.Host != "" {
		return "", false, false
	}
	var slug string
	switch {
	case strings.HasPrefix(u.Path, "/lessons/"):
		slug = strings.TrimSuffix(strings.TrimPrefix(u.Path, "/lessons/"), "/")
	case strings.HasSuffix(u.Path, ".md") && !strings.HasPrefix(u.Path, "/"):
		slug = slugFromFileName(path.Base(u.Path))
	default:
		return "", false, false
	}
	if _, known := l.slugs[slug]; !known {
		return slug, true, false
	}
	target = "/lessons/" + slug
	if u.Fragment != "" {
		target += "#" + u.Fragment
	}
	return target, true, true
}

// singleParagraph strips the <p> around HTML that is one paragraph, for use
// inside <summary>; ok is false when the HTML is anything else.
func singleParagraph(html string) (inline string, ok bool) {
	html = strings.TrimSpace(html)
	inner, found := strings.CutPrefix(html, "<p>")
	inner, closed := strings.CutSuffix(inner, "</p>")
	if !found || !closed || strings.Contains(inner, "<p>") {
		return html, false
	}
	return inner, true
}

// quizHTML is the markup of a quiz (see the package documentation): one
// radio group per question, named after the block (id) and the question.
func quizHTML(id string, items []QuizItem) string {
	var b strings.Builder
	b.WriteString(`<ol class="quiz" aria-label="Check yourself" data-testid="quiz">` + "\n")
	for i, item := range items {
		b.WriteString(`<li class="quiz-question" data-testid="quiz-question">` + "\n")
		b.WriteString(choicesHTML(fmt.Sprintf("%s-q%d", id, i+1), item.Question, item.Choices))
		b.WriteString("</li>\n")
	}
	b.WriteString("</ol>\n")
	return b.String()
}
