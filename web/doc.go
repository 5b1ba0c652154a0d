// Package web is Idemlab's HTTP layer: the routes, the middleware, and the
// templ components that draw the site around the lessons.
//
// # Serving
//
// Every page a course has (the index, each lesson, each lesson's embed view)
// is rendered once, when the course is set (NewServer, SetCourse), into bytes
// with an ETag and a gzip variant; serving one is choosing a variant and
// writing it. Static files (package static, plus lessons.HighlightCSS) are
// served under content-hashed names with a one-year immutable cache.
//
// Routes live in one list, Server.routes. Handlers have the signature
// func(w, r) error, write nothing when they fail, and return a *pageError
// (notFoundf, invalidf) for what the visitor can fix; one function,
// serveError, turns any error into a status and a page inside the layout
// (anything else is logged and shown as a plain 500; if the error page itself
// fails, a fixed fallback page is sent). The mux's own 404 and 405 answers
// get the same pages; a 405 keeps its Allow header.
//
// # Adding a page
//
// Render content that brings its own <main id="main"> inside page(v, meta)
// (full site) or embedPage(v, meta) (iframes: no header, nav or footer; any
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
// # Test ids
//
// Browser and component tests find elements by data-testid; keep these
// stable: site-header, site-footer, brand, theme-toggle, version,
// course-title, start, progress, lesson-list, lesson-item, lesson-link,
// lesson-summary, lesson-facts, done-toggle, course-nav, lesson,
// lesson-position, lesson-title, lesson-meta, lesson-minutes, objectives,
// toc, lesson-body, pager, prev, next, back-to-course, embed-main,
// embed-source, exercise, exercise-goal, exercise-rules, exercise-editor,
// exercise-check, exercise-reset, exercise-hint, exercise-solution,
// exercise-result (with data-state empty|pass|fail|error|notice),
// exercise-pass, exercise-counterexample, exercise-story,
// exercise-violation, exercise-script, exercise-open-playground,
// exercise-error (with data-line), exercise-lesson, exercise-mark (with
// data-passed), playground, playground-scenario, playground-script,
// playground-handlers, playground-expect, playground-caption, error-page
// (with data-status), error-title, error-message, error-action, error-home;
// added by app.js: copy-button, announcer.
package web
