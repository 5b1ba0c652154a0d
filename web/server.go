package web

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"idemlab/web/admit"
	"idemlab/web/exercise"
	"idemlab/web/playurl"
	"idemlab/web/playview"
	"idemlab/web/site"
	"idemlab/web/workshopweb"
	"idemlab/workshop"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/a-h/templ"

	"idemlab/internal/english"
	"idemlab/lessons"
	"idemlab/playground"
	"idemlab/static"
)

// Server serves one course. It is safe for concurrent use; SetCourse swaps
// the course while requests are being served.
type Server struct {
	logger   *slog.Logger
	base     string // path prefix from PublicURL
	origin   string // scheme://host from PublicURL
	version  string
	assets   *site.Assets
	policy   securityPolicy
	site     atomic.Pointer[renderedSite]
	fallback *site.Payload // a plain 500 page, for when rendering the error page fails
	handler  http.Handler
	metrics  *site.Metrics
	limiter  *admit.RateLimiter
	adm      *admit.Admission            // the one path of everything that runs SQL
	workshop *workshopweb.State          // nil: workshop mode is off
	ws       *workshopweb.Pages          // the workshop feature (workshop mode's pages)
	play     *playview.Pages             // the live playground feature
	ledgers  *playground.PostgresLedgers // nil: SQLite ledgers only
	// ledgerGate queues runs for a PostgreSQL ledger (postgresgate.go); nil without.
	ledgerGate *admit.LedgerGate

	// errorContent draws the content of error pages. A field so that a test
	// can make it fail and see the fallback page.
	errorContent func(v *site.View, e site.ErrorView) templ.Component
}

// renderedSite is one course with every page pre-rendered. It is replaced as
// a whole, never modified, so readers need no lock.
type renderedSite struct {
	view    *site.View
	index   *site.Payload
	lessons map[string]*site.Payload // slug → lesson page
	embeds  map[string]*site.Payload // slug → embed page
	// blocks holds every lesson playground in its initial state, by
	// lessonKey(slug, embed) and block id, for pages with one block changed.
	blocks map[string]map[string]*playview.View
}

// NewServer checks the configuration, builds the hashed assets and renders
// every page of the course.
func NewServer(cfg Config, course *lessons.Course) (*Server, error) {
	if course == nil {
		return nil, errors.New("web: NewServer needs a course, got nil")
	}
	origin, base, err := parsePublicURL(cfg.PublicURL)
	if err != nil {
		return nil, fmt.Errorf("web: public URL %w", err)
	}
	ancestors, err := checkFrameAncestors(cfg.FrameAncestors)
	if err != nil {
		return nil, fmt.Errorf("web: %w", err)
	}
	assets, err := site.NewAssets(base, static.FS, map[string][]byte{
		"app.css":       static.Stylesheet(),
		"highlight.css": lessons.HighlightCSS(),
	})
	if err != nil {
		return nil, err
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	s := &Server{
		logger:   logger,
		base:     base,
		origin:   origin,
		version:  cfg.Version,
		assets:   assets,
		policy:   newSecurityPolicy(strings.Join(ancestors, " ")),
		fallback: site.NewPayload([]byte(strings.Replace(fallbackErrorPage, `href="/"`, `href="`+base+`/"`, 1)), ""),

		errorContent: site.ErrorPage,
		ledgers:      cfg.Ledgers,
	}
	s.metrics = site.NewMetrics()
	s.limiter = admit.NewShareLimiter(cfg.Share, cfg.TrustProxy)
	s.adm = admit.New(s.metrics, s.limiter)
	s.ledgerGate = admit.NewLedgerGate(cfg.Ledgers, s.metrics)
	if s.workshop, err = workshopweb.NewState(cfg.Workshop, cfg.PublicURL); err != nil {
		return nil, err
	}
	s.play = &playview.Pages{Adm: s.adm, Metrics: s.metrics, Ledgers: s.ledgers, LedgerGate: s.ledgerGate, AdmitClient: s.admitClient,
		Limiter: func() *admit.RateLimiter { return s.limiter },
		View:    func() *site.View { return s.site.Load().view }}
	s.ws = &workshopweb.Pages{Workshop: s.workshop, Base: base, Origin: origin, Limiter: s.limiter,
		View: func() *site.View { return s.site.Load().view }, Logger: logger}
	s.limiter.Seats = s.ws.SeatCache() // the one cache of verified seats: the fair share's and the workshop's
	cur, err := s.render(course)
	if err != nil {
		return nil, err
	}
	s.site.Store(cur)
	s.handler = s.buildHandler()
	return s, nil
}

// SetCourse renders every page of a new course and swaps it in atomically:
// requests in flight finish with the old pages. It is how a watched lessons
// folder takes effect. If the new course cannot be rendered, the old one
// stays and the error is logged.
func (s *Server) SetCourse(course *lessons.Course) {
	if course == nil {
		s.logger.Error("web: SetCourse called with a nil course; keeping the current one")
		return
	}
	cur, err := s.render(course)
	if err != nil {
		s.logger.Error("web: keeping the current course", "err", err)
		return
	}
	s.site.Store(cur)
	s.adm.Invalidate()
}

// Handler is the whole site, middleware included.
func (s *Server) Handler() http.Handler { return s.handler }

// route is one entry of the route table.
type route struct {
	pattern string
	handler http.Handler
}

// routes is the one list of every URL the site answers. GET patterns also
// answer HEAD. Paths under /embed/ may be framed by FrameAncestors.
func (s *Server) routes() []route {
	ex := newExerciseChecker(s, exercise.DefaultCheckConcurrency())
	ex.Slots = s.adm.Slots // checks and runs share the admission's slots
	return append([]route{
		{"GET /{$}", s.handle(s.serveIndex)},
		{"GET /lessons/{slug}", s.handle(s.serveLesson)},
		{"GET /embed/lessons/{slug}", s.handle(s.serveEmbedLesson)},
		{"GET /oembed", s.handle(s.serveOEmbed)},
		{"GET /healthz", s.handle(s.serveHealth)},
		{"GET /metrics", s.handle(s.serveMetrics)},
		{"GET /static/{file}", s.handle(s.serveStatic)},
	}, slices.Concat(s.featureRoutes(s.play.Routes()), s.featureRoutes(ex.Routes()), s.featureRoutes(s.ws.Routes()))...)
}

// buildHandler wires the routes into a mux and wraps it in the middleware,
// outermost first: request log, panic recovery, security headers,
// cross-origin protection for unsafe methods.
func (s *Server) buildHandler() http.Handler {
	mux := http.NewServeMux()
	for _, r := range s.routes() {
		mux.Handle(r.pattern, r.handler)
	}
	protection := http.NewCrossOriginProtection()
	protection.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.serveError(w, r, &site.Error{Status: http.StatusForbidden,
			Message: "This request came from another site, so it was refused. Nothing was changed."})
	}))
	var h http.Handler = s.withFriendlyFallbacks(mux)
	h = s.withBasePath(h)
	h = protection.Handler(h)
	h = s.withSecurityHeaders(h)
	h = s.withRecovery(h)
	h = s.withRequestLog(h)
	return h
}

// featureRoutes are a feature's routes, each answering its errors through
// serveError.
func (s *Server) featureRoutes(rs []site.Route) []route {
	out := make([]route, 0, len(rs))
	for _, r := range rs {
		out = append(out, route{r.Pattern, s.handle(handlerFunc(r.Serve))})
	}
	return out
}

// handlerFunc is a handler that reports failure by returning an error, having
// written nothing.
type handlerFunc func(w http.ResponseWriter, r *http.Request) error

// handle adapts a handlerFunc: the one place errors become responses.
func (s *Server) handle(h handlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := h(w, r); err != nil {
			s.serveError(w, r, err)
		}
	})
}

// ----- Handlers -----

func (s *Server) serveIndex(w http.ResponseWriter, r *http.Request) error {
	servePage(w, r, s.site.Load().index)
	return nil
}

func (s *Server) serveLesson(w http.ResponseWriter, r *http.Request) error {
	slug := r.PathValue("slug")
	if locked, err := s.ws.LessonLocked(w, r, slug, false); locked || err != nil {
		return err
	}
	if r.URL.Query().Has("pg") {
		return s.serveLessonState(w, r, slug, false)
	}
	p, ok := s.site.Load().lessons[slug]
	if !ok {
		return unknownLesson(slug)
	}
	servePage(w, r, p)
	return nil
}

func (s *Server) serveEmbedLesson(w http.ResponseWriter, r *http.Request) error {
	slug := r.PathValue("slug")
	if locked, err := s.ws.LessonLocked(w, r, slug, true); locked || err != nil {
		return err
	}
	if r.URL.Query().Has("pg") {
		return s.serveLessonState(w, r, slug, true)
	}
	p, ok := s.site.Load().embeds[slug]
	if !ok {
		return unknownLesson(slug)
	}
	servePage(w, r, p)
	return nil
}

func unknownLesson(slug string) error {
	return site.NotFoundf("There is no lesson called “%s”. Pick one from the list below.", english.Truncate(slug, 80))
}

// healthBody is the answer of /healthz.
var healthBody = site.NewPayload([]byte("ok"), "")

func (s *Server) serveHealth(w http.ResponseWriter, r *http.Request) error {
	site.WriteBody(w, r, http.StatusOK, site.TextContentType, site.NoStore, healthBody)
	return nil
}

func (s *Server) serveStatic(w http.ResponseWriter, r *http.Request) error {
	a, ok := s.assets.Lookup(r.PathValue("file"))
	if !ok {
		return site.NotFoundf("There is no file called “%s” here. Static files change name when their content changes; reload the page to get the current ones.", r.PathValue("file"))
	}
	site.WriteBody(w, r, http.StatusOK, a.ContentType, site.Immutable, a.Payload)
	return nil
}

// servePage writes a pre-rendered page. Pages change when the lessons folder
// does, so browsers revalidate them (cheaply, by ETag).
func servePage(w http.ResponseWriter, r *http.Request, p *site.Payload) {
	site.WriteBody(w, r, http.StatusOK, site.HTMLContentType, site.Revalidate, p)
}

// ----- Errors -----

// serveError is the one place a failed request is answered: classify
// decides the status, a failure of ours is logged (a client that went away
// only noted), and the visitor gets the error page inside the layout, or
// {"error", "field"} under /api/. If even the error page fails to render,
// a pre-rendered fallback is sent.
func (s *Server) serveError(w http.ResponseWriter, r *http.Request, err error) {
	e := site.Classify(r, err)
	switch {
	case e.Status >= 500:
		s.logger.ErrorContext(r.Context(), "request failed", "method", r.Method, "path", r.URL.Path, "status", e.Status, "err", err)
	case e.Status == site.StatusClientClosedRequest:
		s.logger.InfoContext(r.Context(), "the client went away before its answer was ready", "method", r.Method, "path", r.URL.Path, "err", err)
	}
	if e.RetryAfter > 0 {
		admit.RetryAfterHeader(w, e.RetryAfter)
	}
	if isAPI(r) {
		site.WriteJSON(w, r, e.Status, site.NoStore, site.APIError{Error: e.Message, Field: e.Field}) // two strings: cannot fail
		return
	}
	view := site.ErrorView{Status: e.Status, Title: errorTitle(e.Status), Message: e.Message, Action: e.Action}
	if e.RetryAfter > 0 && (e.Status == http.StatusTooManyRequests || e.Status == http.StatusServiceUnavailable) {
		// A refusal that passes: the page says when, and (for a GET, which
		// is safe to repeat) loads itself again then, JavaScript or not.
		view.RetryAfter, view.Back = e.RetryAfter, s.sameSiteReferer(r)
		if r.Method == http.MethodGet || r.Method == http.MethodHead {
			view.Retry = s.base + r.URL.RequestURI() // links carry the base path (withBasePath)
			w.Header().Set("Refresh", strconv.Itoa(e.RetryAfter))
		}
	}
	cur := s.site.Load()
	meta := site.PageMeta{Title: view.Title, Section: "error"}
	layout := site.Page(cur.view, meta)
	if strings.HasPrefix(r.URL.Path, "/embed/") {
		layout = site.EmbedPage(cur.view, meta) // an error inside an iframe keeps the iframe's look
	}
	// The page renders even when the client has gone: its request log line
	// should say what was answered, not that rendering was cancelled.
	r = r.WithContext(context.WithoutCancel(r.Context()))
	if renderErr := site.WriteHTML(w, r, e.Status, site.NoStore, layout, s.errorContent(cur.view, view)); renderErr != nil {
		s.logger.ErrorContext(r.Context(), "rendering the error page failed", "status", e.Status, "err", renderErr)
		site.WriteBody(w, r, http.StatusInternalServerError, site.HTMLContentType, site.NoStore, s.fallback)
	}
}

// sameSiteReferer is the page a request came from when it is a page of
// this site (its path and query), or "".
func (s *Server) sameSiteReferer(r *http.Request) string {
	ref, err := url.Parse(r.Referer())
	if err != nil || ref.Host != r.Host || !strings.HasPrefix(ref.Path, "/") || strings.HasPrefix(ref.Path, "//") {
		return ""
	}
	if r.Method == http.MethodGet && ref.RequestURI() == s.base+r.URL.RequestURI() {
		return "" // the same page: "try again" is the way
	}
	return ref.RequestURI()
}

// isAPI reports whether a request is for the JSON API, whose errors are
// JSON too.
func isAPI(r *http.Request) bool {
	return strings.HasPrefix(r.URL.Path, "/api/") || r.URL.Path == "/oembed"
}

func errorTitle(status int) string {
	switch status {
	case http.StatusNotFound:
		return "Page not found"
	case http.StatusBadRequest:
		return "That request did not make sense"
	case http.StatusMethodNotAllowed:
		return "Method not allowed"
	case http.StatusForbidden:
		return "Request refused"
	case http.StatusUnauthorized:
		return "You are not in a room here"
	case http.StatusGone:
		return "This room has ended"
	case http.StatusTooManyRequests:
		return "Wait a moment"
	case http.StatusConflict, http.StatusUnprocessableEntity:
		return "That request was not repeated"
	case http.StatusServiceUnavailable:
		return "Back in a moment"
	default:
		return "Something went wrong"
	}
}

// fallbackErrorPage is sent when the error page itself cannot be rendered:
// plain HTML that cannot fail.
const fallbackErrorPage = `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Something went wrong · Idemlab</title></head>
<body><main data-testid="error-page" data-status="500"><h1>Something went wrong</h1>
<p>The server could not show this page. Please try again in a moment, or go <a href="/">back to the course</a>.</p></main></body></html>
`

// withFriendlyFallbacks gives the mux's own 404 and 405 answers (no route
// matched) the site's error page; a 405 keeps the Allow header the mux set.
// Requests that match a route pass straight through.
func (s *Server) withFriendlyFallbacks(mux *http.ServeMux) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h, pattern := mux.Handler(r)
		if pattern != "" {
			mux.ServeHTTP(w, r)
			return
		}
		// No route: the mux would answer 404, 405 or a redirect to a clean path.
		capture := &capturedResponse{header: http.Header{}}
		h.ServeHTTP(capture, r)
		switch capture.status {
		case http.StatusNotFound:
			s.serveError(w, r, site.NotFoundf("There is no page at %s. It may have moved, or the link may have a typo.", english.Truncate(r.URL.Path, 120)))
		case http.StatusMethodNotAllowed:
			w.Header()["Allow"] = capture.header["Allow"]
			s.serveError(w, r, &site.Error{Status: http.StatusMethodNotAllowed,
				Message: fmt.Sprintf("%s does not accept %s requests; it accepts %s.", english.Truncate(r.URL.Path, 120), r.Method, capture.header.Get("Allow"))})
		default:
			for k, v := range capture.header {
				w.Header()[k] = v
			}
			w.WriteHeader(capture.status)
			w.Write(capture.body.Bytes())
		}
	})
}

// capturedResponse records what the mux's fallback handlers write.
type capturedResponse struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (c *capturedResponse) Header() http.Header { return c.header }
func (c *capturedResponse) Write(b []byte) (int, error) {
	if c.status == 0 {
		c.status = http.StatusOK
	}
	return c.body.Write(b)
}
func (c *capturedResponse) WriteHeader(status int) {
	if c.status == 0 {
		c.status = status
	}
}

// ----- Rendering -----

// render pre-renders every page of a course.
func (s *Server) render(course *lessons.Course) (*renderedSite, error) {
	view := &site.View{Base: s.base, Origin: s.origin, Version: s.version, Assets: s.assets, Course: course, Workshop: s.workshop != nil, Ledgers: s.ledgers}
	cur := &renderedSite{
		view:    view,
		lessons: make(map[string]*site.Payload, len(course.Lessons)),
		embeds:  make(map[string]*site.Payload, len(course.Lessons)),
		blocks:  make(map[string]map[string]*playview.View, 2*len(course.Lessons)),
	}
	ctx := context.Background()
	var err error
	cur.index, err = renderPage(ctx, site.Page(view, site.PageMeta{Description: site.SiteTagline, Canonical: "/", Section: "home"}), indexPage(view))
	if err != nil {
		return nil, fmt.Errorf("web: rendering the course index: %w", err)
	}
	for _, l := range course.Lessons {
		if _, dup := cur.lessons[l.Slug]; dup {
			return nil, fmt.Errorf("web: two lessons have the slug %q (%s)", l.Slug, l.Path)
		}
		pos, _ := site.PositionOf(course, l.Slug)
		meta := site.PageMeta{Title: l.Title, Description: l.Summary, Canonical: playurl.LessonPath(l.Slug), Section: "lesson"}
		if pos.Prev != nil {
			meta.Prev = playurl.LessonPath(pos.Prev.Slug)
		}
		if pos.Next != nil {
			meta.Next = playurl.LessonPath(pos.Next.Slug)
		}
		pgs := playview.BlockViews(view, l, false)
		cur.blocks[playview.LessonKey(l.Slug, false)] = pgs
		if cur.lessons[l.Slug], err = renderPage(ctx, site.Page(view, meta), lessonPage(view, l, pos, pgs)); err != nil {
			return nil, fmt.Errorf("web: rendering lesson %s: %w", l.Path, err)
		}
		// The embed's canonical is the full lesson; it has no rel=prev/next so
		// the arrow keys never navigate an iframe away.
		embedMeta := site.PageMeta{Title: l.Title, Description: l.Summary, Canonical: playurl.LessonPath(l.Slug), Section: "lesson"}
		embedPgs := playview.BlockViews(view, l, true)
		cur.blocks[playview.LessonKey(l.Slug, true)] = embedPgs
		if cur.embeds[l.Slug], err = renderPage(ctx, site.EmbedPage(view, embedMeta), embedLessonPage(view, l, pos, embedPgs)); err != nil {
			return nil, fmt.Errorf("web: rendering the embed view of lesson %s: %w", l.Path, err)
		}
	}
	return cur, nil
}

// renderPage renders content inside a layout into a payload.
func renderPage(ctx context.Context, layout, content templ.Component) (*site.Payload, error) {
	var buf bytes.Buffer
	if err := layout.Render(templ.WithChildren(ctx, content), &buf); err != nil {
		return nil, err
	}
	return site.NewPayload(buf.Bytes(), ""), nil
}

// PlaygroundLink is the site path that replays a checker's counterexample
// in the playground with the learner's handler source, for the CLI; the
// playground's URL codec (playurl) writes it.
func PlaygroundLink(ce *playground.Counterexample, handlerSource string) string {
	return playurl.PlaygroundLink(ce, handlerSource)
}

// serveMetrics is GET /metrics.
func (s *Server) serveMetrics(w http.ResponseWriter, r *http.Request) error {
	s.metrics.Handler.ServeHTTP(w, r)
	return nil
}

// newExerciseChecker is the exercises' checker wired to s, with room for
// concurrency checks at once.
func newExerciseChecker(s *Server, concurrency int) *exercise.Checker {
	return exercise.New(exercise.Deps{
		View:        func() *site.View { return s.site.Load().view },
		Ledgers:     s.ledgers,
		LedgerGate:  s.ledgerGate,
		Metrics:     s.metrics,
		Admission:   s.adm,
		Admit:       s.admitRequest,
		RecordCheck: func(r *http.Request, c workshop.Check) { s.ws.RecordCheck(r, c) },
	}, concurrency)
}

// CheckReport is the JSON report of a handler's check, as the check API
// and `idemlab check --json` write it.
type CheckReport = exercise.CheckReport

// NewCheckReport reports res, checked for the handler source.
func NewCheckReport(res *playground.CheckResult, source string) CheckReport {
	return exercise.NewCheckReport(res, source)
}

// admitClient takes a token from the request's client, or refuses it.
func (s *Server) admitClient(r *http.Request) (string, error) {
	ctx, err := s.admitRequest(r)
	return admit.ClientFrom(ctx), err
}

// admitRequest takes a token from the request's client, or refuses it;
// its context names the client (admit.RateLimiter.WithClient), so that the
// work it starts is held to that client's shares and charged to it. In a
// room the client is the seat, checked against the store (the limiter's
// Seats, shared with workshopweb/record.go): a class behind one address is
// as many clients as seats.
func (s *Server) admitRequest(r *http.Request) (context.Context, error) {
	ctx := s.limiter.WithClient(r)
	client := admit.ClientFrom(ctx)
	if ok, retry := s.limiter.Take(client, 1); !ok {
		s.metrics.Refused("rate")
		return ctx, &site.Error{Status: http.StatusTooManyRequests, RetryAfter: retry,
			Message: "You have run a lot of playgrounds and checks in a short time, so this one waits its turn. Try again in " + english.Plural(retry, "second", "seconds") + "."}
	}
	return ctx, nil
}

// ----- A lesson's block with its own state -----

// serveLessonState is /lessons/{slug}?pg=pg-1&…: the lesson with one block
// in the state its URL names.
func (s *Server) serveLessonState(w http.ResponseWriter, r *http.Request, slug string, embed bool) error {
	cur := s.site.Load()
	v := cur.view
	pos, ok := site.PositionOf(v.Course, slug)
	if !ok {
		return unknownLesson(slug)
	}
	l := pos.Lesson
	q := r.URL.Query()
	id := q.Get("pg")
	var spec *lessons.PlaygroundSpec
	for _, p := range l.Playgrounds {
		if p.ID == id {
			spec = p
		}
	}
	lessonHref := playurl.LessonPath(slug)
	if embed {
		lessonHref = playurl.EmbedPath(slug)
	}
	if spec == nil {
		return site.Invalidf(&site.Link{Label: "Back to the lesson", Href: v.Path(lessonHref)}, "This lesson has no playground called “%s”; it has %s.", english.Truncate(id, 40), english.Plural(len(l.Playgrounds), "playground", "playgrounds"))
	}
	sc, err := playground.LookupScenario(spec.Scenario)
	if err != nil {
		// The lessons package validated it: this is our bug, not the
		// visitor's input (%v, so that classify does not see an InputError).
		return fmt.Errorf("lesson %s, block %s: %v", slug, spec.ID, err)
	}
	var place playurl.Place
	if pre, ok := cur.blocks[playview.LessonKey(slug, embed)][spec.ID]; ok {
		place = pre.Place // its home parsed once, when the site was built
	} else {
		place = playurl.LessonPlace(slug, spec, embed)
	}
	panel, err := playview.PanelRequest(q, v.Path(lessonHref))
	if err != nil {
		return err
	}
	state, redirect, err := playurl.StateFromQuery(q, place.Home, sc.Workers)
	if err == nil && redirect {
		playview.RedirectToState(w, r, v.Path(place.Href(state)), v.Path(place.QueryHref(state)))
		return nil
	}
	state, q = playview.WithPanelOpen(panel, state, q)
	decoded := &state // the run starts from it, without decoding the query again
	if err != nil {
		decoded = nil // resolvePlayground says what was wrong, in place
	}
	fragment := playview.WantsFragment(r)
	views := cur.blocks[playview.LessonKey(slug, embed)]
	meta := site.PageMeta{Title: l.Title, Description: l.Summary, Canonical: playurl.LessonPath(l.Slug), Section: "lesson"}
	if !embed && pos.Prev != nil {
		meta.Prev = playurl.LessonPath(pos.Prev.Slug)
	}
	if !embed && pos.Next != nil {
		meta.Next = playurl.LessonPath(pos.Next.Slug)
	}
	return s.play.ServeRun(w, r, s.play.PlaygroundCompute(v, place, sc, q, decoded, func(pv *playview.View) templ.Component {
		if panel != 0 {
			return playview.MorePanelAlone(pv, panel)
		}
		if fragment {
			return playview.LivePlayground(pv)
		}
		pgs := make(map[string]*playview.View, len(views))
		for k, pv := range views {
			pgs[k] = pv
		}
		pgs[spec.ID] = pv
		if embed {
			return site.InLayout(site.EmbedPage(v, meta), embedLessonPage(v, l, pos, pgs))
		}
		return site.InLayout(site.Page(v, meta), lessonPage(v, l, pos, pgs))
	}))
}
