// Package web is Idemlab's HTTP layer: the Server (NewServer, SetCourse),
// the one route list assembled from the feature packages, the middleware,
// and the index and lesson pages.
//
// # Packages
//
//	web/site         what every page shares: the view, layout and error page, site.Error and Classify, body writing (ETag, gzip, render buffers), hashed assets, metrics, exercise links
//	web/playurl      the playground's state and its URL codec, the only reader and writer of playground URLs (no net/http)
//	web/admit        the admission path: slots, in-flight sharing, the run cache, the fair share, the PostgreSQL ledger gate
//	web/playview     the live playground: its view and markup, /playground, /embed/playground, /api/v1/run
//	web/exercise     exercise and inverse pages, the check form and POST /api/v1/check, the handler reference
//	web/workshopweb  workshop mode: instructor and learner pages, streams, QR, pace (the lesson page asks it LessonLocked)
//
// Imports go one way: web → features (playview, exercise, workshopweb) →
// (site, playurl, admit) → (lessons, playground, workshop). The features
// never import each other; each is built with what it needs and lists its
// routes as []site.Route, which Server.routes wraps in the one error path.
//
// # Serving
//
// Every page a course has (the index, each lesson, each lesson's embed view)
// is rendered once, when the course is set (NewServer, SetCourse), into bytes
// with an ETag and a gzip variant made on first use. Static files (package
// static, plus lessons.HighlightCSS) are served under content-hashed names
// with a one-year immutable cache.
//
// Every body, pre-rendered or rendered per request, HTML or JSON, is written
// by one function, site.WriteBody (package site): it negotiates gzip (Vary:
// Accept-Encoding, an ETag per encoding) and hands a 200 that may be stored
// to http.ServeContent, which answers HEAD, If-None-Match and Range. A body
// rendered per request is drawn into a reused buffer (site.RenderBuffers) and
// kept as the one variant its request takes: compressed only, for a
// request that takes gzip, and inflated for a later client that does not.
//
// Routes live in one list, Server.routes. Handlers have the signature
// func(w, r) error and write nothing when they fail; what the visitor can
// fix is a *site.Error (site.NotFoundf, site.Invalidf, site.CannotRun, or one
// with its own status and field). One function, serveError, answers every
// failure: site.Classify
// turns the error into a status (the one place where a
// *playground.InputError becomes a 400), a failure of ours is logged and
// shown as a plain 500 (a client that went away is only noted), and the
// visitor gets the error page inside the layout, or {"error", "field"}
// under /api/. If the error page itself fails, a fixed fallback page is
// sent. The mux's own 404 and 405 answers and refused cross-origin requests
// take the same path; a 405 keeps its Allow header.
//
// # Adding a page
//
// Render content that brings its own <main id="main"> inside site.Page(v, meta)
// (full site) or site.EmbedPage(v, meta) (iframes: no header, nav or footer; any
// path under /embed/ may be framed by Config.FrameAncestors). Use
// .wide-main for a full-width main instead of the reading measure.
//
// # Embedding
//
// /embed/lessons/{slug} is a lesson without the site's chrome. Inside an
// iframe, app.js posts {type: "idemlab:resize", height, path} to the parent
// whenever its height changes; a host page needs only:
//
//	<iframe src="https://idemlab.example/embed/lessons/why-messages-arrive-twice"
//	        title="Why messages arrive twice" style="width:100%;border:0"></iframe>
//	<script>
//	addEventListener("message", (e) => {
//	  if (e.origin !== "https://idemlab.example" || e.data?.type !== "idemlab:resize") return;
//	  for (const f of document.querySelectorAll("iframe"))
//	    if (f.contentWindow === e.source) f.style.height = e.data.height + "px";
//	});
//	</script>
//
// and its origin in the -frame-ancestors flag. No cookies are involved. A
// ?theme=light or ?theme=dark on the iframe's URL matches the host's theme.
//
// # Exercises
//
// A lesson's ```exercise block renders as ExerciseBlock: a form posting to
// /exercises/{id}/check (a result page, no JavaScript needed), which
// exercise.js turns into a POST /api/v1/check (form fields exercise and
// handler; JSON with passed, schedules, distinct_states, naive_schedules,
// counterexample, error {line, message}, and the result as html) swapped
// in place. Checks are pure and store nothing, so a replayed POST answers
// the same; at most GOMAXPROCS run at once, beyond that 429 with
// Retry-After: 1. Passed exercises are kept in localStorage
// ("idemlab.exercises") and marked on the course index. See exercise.go.
//
// # The playground
//
// One component, LivePlayground (admission.templ; the live figure is drawn
// by playview/live_markup.go), in three places:
// a lesson's ```playground block (/lessons/{slug}, /embed/lessons/{slug}),
// /playground and /embed/playground. Its whole state is in the URL
// (package playurl, whose codec is the only reader and writer of
// playground URLs: links, forms, the JSON API, counterexample links), so every control is a link or
// a GET form, the Back button is undo, and every state is a permalink:
//
//	/playground?scenario=lost-ack&handlers=increment,dedupe-tx&script=deliver+msg-1+lose-ack%3B+redeliver+msg-1&at=1&to=B
//	/lessons/{slug}?pg=pg-1&handlers=…&script=…&at=…#pg-1   (one block changed; the bare lesson is every block at its start)
//
// Parameters: scenario (the page; a lesson block's is fixed), handlers (a,b;
// 2 to 4 with the learner's), script (the grammar; empty means the
// scenario's default), handler (a learner's handler source, run as "mine"
// beside the built-ins, as exercise counterexamples link it), seed, at (event
// cursor: the state after that many events; absent = the last; a new event
// replaces those after it), to (the worker delivery controls name), pg (the
// lesson block), show (the panels drawn: rows, chart, diagram, steps, sql;
// absent = the place's own, none in a lesson, all but sql at /playground).
// A closed panel is not drawn at all; its toggle (pgViews) links to the
// state with show= changed. open (the control panels drawn open: workers,
// broker, handlers; absent = none) works the same way for the <details>
// under the messages: a closed one holds only a link to the state with it
// open, and panel=NAME (never in a link) answers that one panel alone,
// which playground.js fetches when it opens (playview/more.go). Forms send h=NAME (checkboxes) and
// op=advance|prune with n; the server answers them with 303 to the
// canonical URL. fragment=1 answers the figure alone: playground.js fetches
// it, swaps the figure, pushes the URL (replaces it for a panel's toggle)
// and keeps scroll, focus and open details; popstate restores. A bad URL is a 400
// page quoting the parser ("script: event 2: …") with a link back to the
// playground's start; /playground without a scenario lists the scenarios.
//
// GET /api/v1/run?scenario=…&handlers=…&script=…&seed=… answers the engine's
// Trace as JSON (application/json; the schema is documented in package
// playground: top level scenario, title, script, seed, tick_unit, settings,
// workers, messages, events, handlers; each handler has name, ok, verdict,
// violations[{kind, message_id, step, event, detail}], first_divergence,
// expected, actual, ledger, frames (one per event: expected/actual figures,
// ledger, changed rows, step range) and steps[{index, event, tick, kind,
// worker, message, attempt, sql, args, rows_affected|rows_found, error,
// changes, note}]). Bad input: 400 with {"error": "script: event 2: …",
// "field": "script"}; a failure of ours: 500 {"error": …}.
//
// The embedded playground posts its height like the embed lesson view:
//
//	<iframe src="https://idemlab.example/embed/playground?scenario=lost-ack" title="Idemlab playground" style="width:100%;border:0"></iframe>
//
// with the same listener as below; its controls stay inside the frame.
//
// # Test ids
//
// Browser and component tests find elements by data-testid; keep these
// stable. This list is the catalogue, one line per part of the site, with
// the attributes tests read in brackets; TestDocCatalogue_MatchesTheTemplates
// compares it with every id the templates, the Go code that fills them,
// app.js and workshop.js can write, both ways, so it cannot drift.
//
//	layout:     site-header site-footer brand theme-toggle version
//	index:      course-title course-facts start progress lesson-list lesson-list-empty lesson-item lesson-link lesson-summary lesson-facts done-toggle[data-slug] reference-list reference-item reference-link
//	lesson:     lesson lesson-position lesson-title lesson-meta lesson-minutes objectives toc lesson-body lesson-sources pager prev next back-to-course course-nav course-nav-reference embed-main embed-source
//	exercise:   exercise exercise-goal exercise-rules exercise-editor exercise-check exercise-reset exercise-hint exercise-solution exercise-result[data-state] exercise-pass exercise-counterexample exercise-story exercise-violation exercise-script exercise-open-playground exercise-error[data-line] exercise-lesson exercise-page-title exercise-mark[data-passed] exercise-ledger exercise-unfinished
//	inverse:    inverse-handler inverse-length inverse-holds inverse-shortest exercise-reveal
//	playground: playground[data-scenario data-handlers data-script data-at data-total data-url data-home data-show] playground-scenario playground-script playground-handlers playground-expect playground-caption
//	live:       pg-verdict[data-handler data-verdict] pg-verdict-label pg-verdict-text pg-divergence[data-event] pg-timeline pg-event[data-event] pg-back pg-forward pg-latest pg-start-over pg-reset pg-permalink pg-full-size pg-help-button pg-keys pg-clock pg-story pg-ledgers pg-ledger[data-handler data-verdict] pg-figure pg-figure-actual pg-chart pg-controls pg-message[data-message] pg-message-status pg-deliver pg-redeliver pg-publish pg-redrive pg-expire pg-start pg-faults pg-fault-none pg-lose-ack pg-crash-before-ack pg-crash-after pg-step pg-finish pg-crash pg-restart pg-replay pg-poll pg-rebalance pg-partition-controls pg-prune pg-advance pg-advance-form pg-prune-form pg-handler-form pg-script-form pg-diagram pg-diagram-scroll pg-steps pg-sql pg-announce pg-skip pg-end pg-embed pg-diagram-lanes pg-views pg-show-rows pg-show-chart pg-show-diagram pg-show-steps pg-show-sql pg-rows pg-chart-panel pg-diagram-panel pg-problem[data-field] pg-problem-message pg-problem-line pg-ledger-switch pg-more[data-more] pg-more-open
//	goals:      pg-goals pg-goals-count pg-goal[data-goal data-goal-met] pg-goal-done pg-goal-check pg-goal-solution pg-predict pg-predict-form pg-predict-choice pg-predict-submit pg-predict-skip pg-predict-result[data-correct] pg-exercise-back
//	reference:  handler-reference handler-ref-table[data-table] handler-ref-param[data-param] handler-ref-directive[data-directive] handler-ref-call[data-call]
//	picker:     pg-picker pg-scenarios pg-scenario-card pg-all-scenarios
//	refused:    pg-refusal pg-refusal-home pg-refusal-undo
//	recorded:   pg-recorded pg-recorded-ledger pg-recorded-sqlite pg-recorded-steps
//	error page: error-page[data-status] error-title error-message error-action error-home error-back error-retry error-retry-note
//	app.js:     copy-button announcer
//	workshop:   ws-instructor-home ws-create-form ws-new-room-name ws-create ws-rooms ws-no-rooms ws-class ws-code ws-projector-link ws-ended ws-learner-count ws-rows ws-row[data-learner data-rank data-order] ws-row-name ws-cell[data-exercise data-state] ws-row-stuck ws-row-online[data-online] ws-row-last-seen ws-row-opened[data-count] ws-row-goals[data-count data-by-browser] ws-row-quizzes[data-count data-right] ws-row-predictions[data-count data-right data-by-browser] ws-row-drill ws-room-status ws-pace-now ws-countdown-now[data-ends] ws-pages ws-page-prev ws-page-next ws-drill[data-learner] ws-drill-back ws-drill-name ws-drill-exercise[data-exercise data-passed] ws-drill-handler ws-drill-attempts ws-drill-attempt[data-passed] ws-drill-replay ws-rename-form ws-rename ws-remove-form ws-remove ws-summary ws-passed ws-passed-count[data-exercise] ws-counterexamples ws-counterexample[data-exercise] ws-counterexample-count[data-learners] ws-show-class ws-last-chaos ws-chaos-survivors[data-survived data-ran] ws-pace-form ws-pace-goto ws-pace-open ws-countdown-form ws-countdown ws-chaos-form ws-chaos[data-fault] ws-end-form ws-end ws-export-csv ws-export-json ws-delete-form ws-delete
//	projector:  ws-projector ws-projector-code ws-projector-url ws-qr
//	learner:    ws-join ws-join-form ws-join-code ws-join-name ws-join-submit ws-room[data-ws-after] ws-room-banner ws-room-name ws-room-ended ws-resume-link ws-hand-form ws-raise-hand ws-lower-hand ws-locked ws-locked-open ws-locked-room
//	workshop.js: ws-banner ws-banner-hand ws-banner-news ws-conn
//
// exercise-result's data-state is empty, pass, fail, error, unfinished or notice. The
// playground line holds both a lesson's static block and the live
// playground (figure[data-testid=playground]); in the live one the other
// views mark the first divergence with [data-divergence] or [data-divergent].
// A control the engine would refuse is a span with aria-disabled and the
// engine's reason in [data-reason]; pg-problem is a learner's rejected
// input (a 400 page, the playground in its last good state). A lesson
// playground's goals (playview/goals.templ) mark each met goal with
// data-goal-met="ID", the engine's answer for the state shown.
package web
