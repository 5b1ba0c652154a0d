package lessons

import "idemlab/playground"

// The types in this file are the contract other packages (web, main) build on.
// Change them only together with their users.

// Course is a loaded, validated and pre-rendered set of lessons, in order.
type Course struct {
	Lessons   []*Lesson // sorted by Order
	bySlug    map[string]*Lesson
	exercises map[string]*ExerciseSpec // by id
}

// Lesson is one markdown file, validated and rendered once.
type Lesson struct {
	Slug       string   // from the file name, without ".md"
	Title      string   // front matter
	Summary    string   // front matter
	Order      int      // front matter; unique within a course
	Minutes    int      // front matter
	Objectives []string // front matter
	Kind       string   // front matter, optional: KindLesson (the default) or KindReference
	Sources    []Source // front matter, optional (required by lint for lessons): where the facts come from
	Path       string   // file name inside the lessons folder, for messages

	// Body is the rendered lesson in document order: HTML segments with
	// directive blocks (playgrounds, later exercises) between them, so that
	// the web layer can render each directive through its own component.
	Body        []Block
	TOC         []Heading         // level-2 and level-3 headings, in order
	Playgrounds []*PlaygroundSpec // every ```playground block, in order
	Exercises   []*ExerciseSpec   // every ```exercise block, in order

	orderLine int // file line of the order field, for duplicate-order messages
}

// The kinds of page a course holds (front matter "kind").
const (
	// KindLesson is a numbered lesson: it counts towards the course's
	// lessons, reading time and progress.
	KindLesson = "lesson"
	// KindReference is a page to look things up in, such as a glossary:
	// listed apart from the numbered lessons and not counted.
	KindReference = "reference"
)

// IsReference reports whether the page is a reference page rather than a
// numbered lesson. A Lesson built by hand with no Kind is a lesson.
func (l *Lesson) IsReference() bool { return l.Kind == KindReference }

// Block is one piece of a lesson body: exactly one field is set. These
// are the blocks the site can draw; a directive's value of any other type
// is a problem (see Directive).
type Block struct {
	HTML       string          // rendered markdown (goldmark, raw HTML off): safe to emit as is
	Playground *PlaygroundSpec // a ```playground block
	Exercise   *ExerciseSpec   // an ```exercise block
}

// Heading is an entry of a lesson's table of contents.
type Heading struct {
	Level int    // 2 or 3
	ID    string // the anchor id goldmark gave the heading
	Text  string // plain text
}

// PlaygroundSpec is the parsed YAML of a ```playground fenced block.
type PlaygroundSpec struct {
	ID       string            // "pg-1", "pg-2", … in document order; unique within a lesson
	Scenario string            `yaml:"scenario"`
	Handlers []string          `yaml:"handlers"`
	Script   string            `yaml:"script"`
	Caption  string            `yaml:"caption"`
	Expect   map[string]string `yaml:"expect"` // handler name → "ok", "duplicate-effect", "lost-effect"
	Goals    []*GoalSpec       // optional tasks the engine checks (goal.go)
	Predict  *PredictSpec      // optional question asked before the verdicts (predict.go)
	// Ledger is the database the block runs on: "" for SQLite, else a
	// PostgreSQL ledger's name (postgres-rc, postgres-rr,
	// postgres-serializable; pgblock.go).
	Ledger string
	// Recorded is the block's run recorded on a real PostgreSQL server
	// (recorded/SLUG.ID.json beside the lessons), for a server without
	// one; nil for a SQLite block or when the course has no recording.
	Recorded *Recording
	File     string // lesson file, for messages
	Line     int    // 1-based line of the opening fence

	fieldLines    map[string]int // key → file line, for messages (see FieldLine)
	recordingPath string         // a PostgreSQL block's: RecordingPath(lesson, ID)
}

// ExerciseSpec is a parsed ```exercise block: the engine's exercise (id,
// goal, scenarios, bounds, invariants, start, solution, hints) and where it
// was written. Exercise ids are unique across a course.
type ExerciseSpec struct {
	*playground.Exercise
	Lesson string // slug of the lesson it belongs to
	File   string // lesson file, for messages
	Line   int    // 1-based line of the opening fence

	fieldLines  map[string]int // key ("goal", "bounds.workers") → file line, for messages
	scriptStart map[string]int // "start"/"solution" → file line of the script's first line (literal blocks)
}
