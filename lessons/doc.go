// Package lessons owns the course: the markdown lesson files (embedded in the
// binary, or read from a folder with -lessons DIR) and the code that loads,
// validates and renders them once, so that serving a lesson costs no parsing.
//
// # Writing a lesson
//
// A lesson is one file named NN-slug.md or slug.md at the top of the lessons
// folder (this repository uses NN-slug.md, so that a directory listing shows
// the course in order). The slug — the file name without ".md" and without an
// optional leading "digits-" prefix — is the lesson's URL: /lessons/slug.
// Files whose names start with "_" or "." are ignored (drafts).
//
// The file starts with YAML front matter; every field is required:
//
//	---
//	title: Why messages arrive twice
//	summary: One sentence for the course index.
//	order: 1          # position in the course, unique
//	minutes: 8        # reading time
//	objectives:
//	  - What the learner can do afterwards.
//	---
//
// The body is GitHub-flavoured markdown with raw HTML disabled: tables,
// strikethrough, task lists, automatic heading ids, callouts (a block quote
// starting with a line [!NOTE], [!TIP] or [!WARNING]), and code highlighted by
// chroma with CSS classes (see HighlightCSS). Links to other lessons are
// written other.md, 02-other.md or /lessons/other; all are checked, and the .md
// forms are rewritten to /lessons/other.
//
// A fenced block whose info string is "playground" holds a YAML spec (see
// PlaygroundSpec and ParsePlaygroundSpec) and becomes a Block of its own in
// Lesson.Body, which is why such blocks must sit at the top level of the
// lesson. Other fenced block kinds are added through Options.Directives. A
// fenced block of a kind that is neither a directive nor a language chroma
// knows is reported, so that a typo such as ```playgroud does not silently
// render as code; so is a callout marker other than the three above.
//
// Every problem found is reported as "file:line: message" in one *LoadError,
// sorted by file and line: what `idemlab lint` prints and what stops a start.
//
// Rendered HTML conventions the stylesheet relies on: code blocks are
// <pre class="chroma"><code>… with chroma token classes (HighlightCSS styles
// them); callouts are <aside class="callout callout-note|tip|warning"
// role="note"> starting with <p class="callout-title">; h2 and h3 end with
// <a class="heading-anchor" href="#id">#</a>; table cells align with the
// align attribute, never a style attribute, so a strict CSP holds.
package lessons

import (
	"embed"
	"io/fs"
)

//go:embed *.md examples sql
var embedded embed.FS

// Embedded returns the course shipped in the binary: the *.md files of this
// folder, at the root of the returned file system.
func Embedded() fs.FS { return embedded }
