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
// The file starts with YAML front matter; every field but kind and sources is
// required:
//
//	---
//	title: Why messages arrive twice
//	summary: One sentence for the course index.
//	order: 1          # position in the course, unique
//	minutes: 8        # reading time
//	objectives:
//	  - What the learner can do afterwards.
//	kind: lesson      # optional: lesson (the default) or reference
//	sources:          # optional for Load, required by lint for lessons
//	  - title: "Amazon SQS: visibility timeout"
//	    url: https://docs.aws.amazon.com/…
//	---
//
// sources lists the documentation a lesson's facts come from, each item a
// title and an absolute https:// address, listed once; the site shows them
// as links at the end of the lesson and fetches nothing. A lesson (not a
// reference page) without them is a problem when Options.RequireSources is
// set, as `idemlab lint` sets it.
//
// A reference page (kind: reference, such as the glossary) is a page to look
// things up in rather than a step of the course: Lesson.IsReference reports
// it, and the site lists it apart from the numbered lessons, without a
// number, and leaves it out of the lesson count, the reading time and the
// progress. Its order still places it among the pages (its neighbours).
// Any other kind is a problem reported on its line.
//
// The body is GitHub-flavoured markdown with raw HTML disabled: tables,
// strikethrough, task lists, automatic heading ids, callouts (a block quote
// starting with a line [!NOTE], [!TIP] or [!WARNING]), and code highlighted by
// chroma with CSS classes (see HighlightCSS). Links to other lessons are
// written other.md, 02-other.md or /lessons/other; all are checked, and the .md
// forms are rewritten to /lessons/other.
//
// Fenced blocks with a meaning of their own:
//
//   - ```go include=PATH (or ```sql, or any language chroma knows), with an
//     empty body, shows the file PATH — relative to the lessons folder, read
//     from the same fs.FS as the lessons — highlighted like any code block;
//     lines=A-B shows lines A to B only (1-based, inclusive; lines=A- runs to
//     the end, lines=A is one line). The course keeps its Go examples in
//     examples/NAME/main.go (packages of the module: vetted, built and run by
//     the tests, which compare their output with the file's trailing
//     "// Output:" comment) and its SQL in sql/NAME.sql (run against SQLite
//     by the tests, which check every "-- expect: changes=N",
//     "-- expect: error TEXT" and "-- expect rows: a, b; c, d" comment
//     against the statement before it). So the code a lesson shows is code
//     that was compiled or run. Includes may sit anywhere, callouts included.
//
//   - ```playground holds a YAML spec (see PlaygroundSpec and
//     ParsePlaygroundSpec) and becomes a Block of its own in Lesson.Body,
//     which is why such blocks must sit at the top level of the lesson. Each
//     spec is run through the playground engine (CheckWithEngine, unless
//     Options.CheckPlayground says otherwise): unknown names, a script the
//     engine refuses, and an expect verdict the engine does not show are all
//     problems, so a lesson cannot claim what the playground will not show.
//     A block may state goals (GoalSpec: id, task, check in the engine's
//     goal language, see playground.Goal, solution, done): the engine check
//     runs each solution and requires it to meet its goal, and the block's
//     own script not to, so every goal is reachable and none is met before
//     the learner acts. A block may also ask first (PredictSpec: question
//     and graded choices, each choice's optional check run the same way:
//     the correct one must hold at the end of the script, the others not).
//     A block with `ledger: postgres-rc` (postgres-rr, postgres-serializable)
//     runs on PostgreSQL at that isolation level: its claims are proved on
//     a real server when one is given (Options.Ledgers), else against the
//     run recorded in recorded/SLUG.ID.json, which a site without
//     PostgreSQL shows, labelled, in place of the live block (pgblock.go).
//
//   - ```exercise holds a YAML mapping decoded into playground.Exercise
//     (see ParseExerciseSpec): id (unique across the course; a-z, 0-9 and
//     "-"), title, goal, scenarios, invariants, bounds (workers, messages,
//     max_events, crashes, lost_acks, expiries, duplicates, publishes,
//     replays, restarts, prunes, interleave, advance, max_clock,
//     retry_window, replay_window, max_id_age), start and solution (handler scripts, best written as
//     literal blocks "start: |" so that a mistake is reported on its own
//     file line), and hints (optional). Keys are strict: an unknown key is
//     a problem that names the likely typo. The block becomes a Block of its
//     own (Block.Exercise, so it must sit at the top level) and is listed in
//     Lesson.Exercises and Course.Exercises. The course writes it under an
//     "## Exercise" heading with a sentence of lead-in, as the last section
//     of a lesson. With Options.CheckExercises (set by `idemlab lint` and
//     the tests, not by a server start: about a second per exercise) the
//     checker proves that the solution holds in every schedule within the
//     bounds and that the starting script does not.
//
//     An inverse exercise names the handler to break instead of a solution:
//     break (a built-in handler) or break_handler (a handler script, a
//     literal block), one scenario, and bounds without interleave; its
//     start, optional, is a script of events. The learner writes the
//     shortest script that breaks the handler (playground.CheckBreak). Lint
//     proves that some script within the bounds breaks it and that the
//     starting script does not (inverse.go).
//
//   - ```quiz holds a YAML list of questions, each {q: …, choices: […]}
//     (see Choice: 2 to 6 choices, each with choice and why, exactly one
//     with correct: true), rendered in place as a "check yourself" list of
//     radio groups: picking a choice shows why it is right or wrong. q,
//     choice and why are one paragraph of markdown each (raw HTML off).
//
// Other fenced block kinds are added through Options.Directives, registered
// beside the three built-in ones in one table (directiveTable). The site
// draws what a Block has a field for, so a block it could not draw is a
// problem on its fence, never dropped: a directive's value of another type,
// a directive that produced nothing, and a fenced block of a kind that is
// neither a directive nor a language chroma knows (so that a typo such as
// ```playgroud does not silently render as code). So is a callout marker
// other than the three above.
//
// Every problem found is reported as "file:line: message" in one *LoadError,
// sorted by file and line: what `idemlab lint` prints and what stops a start.
//
// Rendered HTML conventions the stylesheet relies on: code blocks are
// <pre class="chroma"><code>… with chroma token classes (HighlightCSS styles
// them); callouts are <aside class="callout callout-note|tip|warning"
// role="note"> starting with <p class="callout-title">; h2 and h3 end with
// <a class="heading-anchor" href="#id">#</a>; table cells align with the
// align attribute, never a style attribute, so a strict CSP holds; a quiz is
// <ol class="quiz" aria-label="Check yourself"> whose items are
// <li class="quiz-question"><fieldset class="choices"><legend
// class="choices-question">question</legend> then per choice <div
// class="choice" data-correct="true|false"><input type="radio"><label>
// <p class="choice-why"> — shown by CSS when its radio is :checked.
package lessons

import (
	"embed"
	"io/fs"
)

//go:embed *.md examples sql recorded
var embedded embed.FS

// Embedded returns the course shipped in the binary: the *.md files of this
// folder at the root of the returned file system, with the examples and sql
// folders their include= fences read, and the recorded folder of PostgreSQL
// blocks' runs (pgblock.go).
func Embedded() fs.FS { return embedded }
