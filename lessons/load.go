package lessons

import (
	"bytes"
	"cmp"
	"fmt"
	"io/fs"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"go.abhg.dev/goldmark/frontmatter"

	"idemlab/playground"
)

// Options tune Load.
type Options struct {
	// CheckPlayground validates a ```playground spec against the engine
	// (scenario and handler names, the script, the expect claims). Load has
	// already checked that the spec is structurally complete. nil means
	// CheckWithEngine; a function that returns nil skips the engine. Return
	// a *FieldError to point at one field's line.
	CheckPlayground func(*PlaygroundSpec) error

	// Ledgers is a PostgreSQL server for the blocks that run on one
	// (ledger: postgres-rc…): with it, CheckWithEngine proves their claims
	// there and compares their recordings with the live run; nil checks
	// them against their recordings (pgblock.go).
	Ledgers *playground.PostgresLedgers

	// Directives add fenced block kinds beyond the built-in "playground",
	// "exercise" and "quiz", registered the same way (see Directive).
	Directives []Directive

	// CheckExercises runs the checker on every ```exercise block: its
	// solution must hold in all schedules and its starting script must
	// fail. It takes about a second per exercise, so `idemlab lint` and the
	// tests ask for it and a server start does not.
	CheckExercises bool

	// RequireSources makes a lesson (kind lesson) without a sources field a
	// problem. `idemlab lint` asks for it, so that every course it passes
	// says where its facts come from; a server start does not, so that an
	// instructor's draft still loads.
	RequireSources bool

	// DisplayRoot is put in front of file names in problems (e.g. the
	// -lessons folder), so that messages name paths the author can open.
	DisplayRoot string
}

// slugPattern is what a slug may look like: it becomes a URL path segment.
var slugPattern = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)

// orderPrefix is the optional "NN-" in front of a slug in a file name.
var orderPrefix = regexp.MustCompile(`^[0-9]+-`)

// slugFromFileName turns "02-what-idempotent-means.md" (or
// "what-idempotent-means.md") into "what-idempotent-means".
func slugFromFileName(name string) string {
	return orderPrefix.ReplaceAllString(strings.TrimSuffix(name, ".md"), "")
}

// isLessonFile reports whether a folder entry is a lesson: a top-level *.md
// file not starting with "_" or "." (the same files //go:embed *.md takes).
func isLessonFile(e fs.DirEntry) bool {
	name := e.Name()
	return !e.IsDir() && strings.HasSuffix(name, ".md") && !strings.HasPrefix(name, "_") && !strings.HasPrefix(name, ".")
}

// loader holds what loading one course needs; problems accumulate in it.
type loader struct {
	fsys       fs.FS
	opts       Options
	md         goldmark.Markdown
	directives map[string]Directive
	slugs      map[string]string // slug → display path of its file
	problems   []Problem

	anchors     map[string]map[string]bool // slug → heading ids of that lesson
	exerciseIDs map[string]string          // exercise id → "file:line" of its block
	goalIDs     map[string]int             // "file/goal id" → line of the goal, unique within a lesson
	fragments   []fragmentLink             // links to lesson#fragment, checked once all lessons are read
}

// fragmentLink is a link to a heading of a lesson, remembered so that the
// heading can be checked once every lesson has been rendered.
type fragmentLink struct {
	file, dest, slug, fragment string
	line                       int
}

func (l *loader) problem(file string, line int, msg string) {
	l.problems = append(l.problems, Problem{File: file, Line: line, Msg: msg})
}

func (l *loader) display(name string) string {
	if l.opts.DisplayRoot == "" {
		return name
	}
	return filepath.Join(l.opts.DisplayRoot, name)
}

func (l *loader) directiveKinds() []string {
	kinds := make([]string, 0, len(l.directives))
	for k := range l.directives {
		kinds = append(kinds, k)
	}
	slices.Sort(kinds)
	return kinds
}

// Load reads every lesson at the top of fsys, validates it and renders it.
// It reports every problem it finds at once, as a *LoadError; a course is
// returned only when there are none. A misconfigured Options (a directive
// without Parse, a kind defined twice) is a plain error.
func Load(fsys fs.FS, opts Options) (*Course, error) {
	l := &loader{fsys: fsys, opts: opts, md: newMarkdown(), slugs: map[string]string{}, anchors: map[string]map[string]bool{}, exerciseIDs: map[string]string{}, goalIDs: map[string]int{}}
	var err error
	if l.directives, err = l.directiveTable(); err != nil {
		return nil, err
	}
	folder := cmp.Or(opts.DisplayRoot, ".")

	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return nil, &LoadError{Problems: []Problem{{File: folder, Msg: "cannot read the lessons folder: " + err.Error()}}}
	}
	var names []string
	for _, e := range entries {
		if !isLessonFile(e) {
			continue
		}
		name := e.Name()
		names = append(names, name)
		slug := slugFromFileName(name)
		if !slugPattern.MatchString(slug) {
			l.problem(l.display(name), 0, fmt.Sprintf("file name must be NN-slug.md or slug.md, where the slug %q is lowercase letters, digits and single dashes", slug))
			continue
		}
		if other, dup := l.slugs[slug]; dup {
			l.problem(l.display(name), 0, fmt.Sprintf("slug %q is already taken by %s", slug, other))
			continue
		}
		l.slugs[slug] = l.display(name)
	}
	if len(names) == 0 {
		return nil, &LoadError{Problems: []Problem{{File: folder, Msg: "no lessons: want at least one NN-slug.md file"}}}
	}

	course := &Course{bySlug: map[string]*Lesson{}}
	orders := map[int]*Lesson{}
	for _, name := range names {
		lesson := l.loadLesson(name)
		if lesson == nil {
			continue
		}
		if first, dup := orders[lesson.Order]; dup && lesson.Order > 0 {
			l.problem(lesson.Path, lesson.orderLine, fmt.Sprintf("order %d is already used by %s", lesson.Order, first.Path))
		}
		orders[lesson.Order] = lesson
		if _, dup := course.bySlug[lesson.Slug]; !dup {
			course.bySlug[lesson.Slug] = lesson
			course.Lessons = append(course.Lessons, lesson)
		}
	}
	for _, f := range l.fragments {
		if ids, loaded := l.anchors[f.slug]; loaded && !ids[f.fragment] {
			l.problem(f.file, f.line, fmt.Sprintf("link to %q: lesson %q has no heading #%s", f.dest, f.slug, f.fragment))
		}
	}
	slices.SortFunc(course.Lessons, func(a, b *Lesson) int { return cmp.Compare(a.Order, b.Order) })
	if opts.CheckExercises {
		l.problems = append(l.problems, checkExercises(course.Exercises())...)
	}
	if len(l.problems) > 0 {
		slices.SortStableFunc(l.problems, func(a, b Problem) int {
			return cmp.Or(cmp.Compare(a.File, b.File), cmp.Compare(a.Line, b.Line))
		})
		return nil, &LoadError{Problems: l.problems}
	}
	course.exercises = map[string]*ExerciseSpec{}
	for _, e := range course.Exercises() {
		course.exercises[e.ID] = e
	}
	return course, nil
}

// utf8BOM is stripped from the start of a file: some editors write it, and it
// would hide the front matter's opening "---".
var utf8BOM = []byte("\xef\xbb\xbf")

// normalizeNewlines turns CRLF and lone CR line endings into LF, so that
// goldmark, yaml.v3 and our line numbers all count lines the same way.
func normalizeNewlines(src []byte) []byte {
	if !bytes.ContainsRune(src, '\r') {
		return src
	}
	src = bytes.ReplaceAll(src, []byte("\r\n"), []byte("\n"))
	return bytes.ReplaceAll(src, []byte("\r"), []byte("\n"))
}

// loadLesson parses, validates and renders one file. It returns nil when the
// file cannot be read or its front matter is not closed; other problems are
// recorded and the lesson is still returned, so that course-wide checks
// (duplicate orders) run too.
func (l *loader) loadLesson(name string) *Lesson {
	file := l.display(name)
	source, err := fs.ReadFile(l.fsys, name)
	if err != nil {
		l.problem(file, 0, "cannot read: "+err.Error())
		return nil
	}
	source = normalizeNewlines(bytes.TrimPrefix(source, utf8BOM))
	lesson := &Lesson{Slug: slugFromFileName(name), Path: file, Kind: KindLesson}
	bad := func(line int, msg string) { l.problem(file, line, msg) }

	state, yamlText := scanFrontMatter(source)
	switch state {
	case frontMatterMissing:
		bad(1, "missing front matter: start the file with a --- line, then "+joinWords(frontMatterKeys, "and")+", then ---")
	case frontMatterUnclosed:
		bad(1, "front matter is never closed: end it with a --- line")
		return nil
	}

	ctx := parser.NewContext()
	doc := l.md.Parser().Parse(text.NewReader(source), parser.WithContext(ctx))
	if data := frontmatter.Get(ctx); data != nil {
		root, err := decodeFrontMatterNode(data)
		if err != nil {
			line, msg := yamlErrorPosition(err, yamlText)
			bad(1+line, "front matter: invalid YAML: "+msg)
		} else {
			fm := decodeFrontMatter(root, yamlText, bad)
			lesson.Title, lesson.Summary = fm.Title, fm.Summary
			lesson.Order, lesson.Minutes = fm.Order, fm.Minutes
			lesson.Objectives, lesson.orderLine = fm.Objectives, fm.OrderLine
			lesson.Kind, lesson.Sources = fm.Kind, fm.Sources
			if l.opts.RequireSources && !fm.HasSources && lesson.Kind == KindLesson {
				bad(1, `front matter: missing field "sources": list the documentation each fact comes from, as items with title and url`)
			}
		}
	}
	l.renderBody(lesson, doc, source, newLineIndex(source))
	return lesson
}

// Lesson returns the lesson with this slug, or nil.
func (c *Course) Lesson(slug string) *Lesson {
	if c.bySlug == nil { // a Course built by hand, as in other packages' tests
		i := slices.IndexFunc(c.Lessons, func(l *Lesson) bool { return l.Slug == slug })
		if i < 0 {
			return nil
		}
		return c.Lessons[i]
	}
	return c.bySlug[slug]
}

// Neighbours returns the lessons before and after slug in course order; either
// is nil at an end of the course or when slug is unknown.
func (c *Course) Neighbours(slug string) (prev, next *Lesson) {
	i := slices.IndexFunc(c.Lessons, func(l *Lesson) bool { return l.Slug == slug })
	if i < 0 {
		return nil, nil
	}
	if i > 0 {
		prev = c.Lessons[i-1]
	}
	if i+1 < len(c.Lessons) {
		next = c.Lessons[i+1]
	}
	return prev, next
}
