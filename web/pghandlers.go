package web

import (
	"context"
	"errors"
	"fmt"
	"idemlab/web/playurl"
	"idemlab/web/site"
	"net/http"
	"strings"

	"github.com/a-h/templ"

	"idemlab/internal/english"
	"idemlab/lessons"
	"idemlab/playground"
)

// fragmentParam asks for the playground alone, without the page around it:
// app.js swaps it in place. It never appears in a URL the visitor sees.
const fragmentParam = "fragment"

func wantsFragment(r *http.Request) bool { return r.URL.Query().Get(fragmentParam) == "1" }

// runPlayground runs a state and computes its view. Bad input is a
// *playground.InputError (resolvePlayground shows it in place).
func (s *Server) runPlayground(ctx context.Context, budget *playground.Budget, usage *playground.Usage, v *site.View, place playurl.Place, sc *playground.Scenario, state playurl.State) (*playgroundView, error) {
	if pv := recordedInstead(v, place, sc, state); pv != nil {
		return pv, nil
	}
	req, err := state.Request(sc, v.Ledgers)
	if err == nil {
		err = checkPlaceParams(v, place, state)
	}
	if err != nil {
		return nil, err
	}
	req.Budget, req.Usage, req.Probe = budget, usage, controlsProbe(sc, state)
	tr, err := playground.Run(ctx, req)
	var ie *playground.InputError
	switch {
	case errors.As(err, &ie):
		return nil, ie
	case err != nil:
		return nil, fmt.Errorf("running %s: %w", english.Truncate(place.Query(state), 200), err)
	}
	if state.At > len(tr.Events) {
		return nil, &playground.InputError{Field: "at", Msg: fmt.Sprintf("there is no event %d; the script has %s", state.At, english.Plural(len(tr.Events), "event", "events"))}
	}
	return newPlaygroundView(v, place, state, tr, sc), nil
}

// ----- /playground and /embed/playground -----

func (s *Server) servePlayground(w http.ResponseWriter, r *http.Request) error {
	return s.servePlaygroundPage(w, r, false)
}

func (s *Server) serveEmbedPlayground(w http.ResponseWriter, r *http.Request) error {
	return s.servePlaygroundPage(w, r, true)
}

func (s *Server) servePlaygroundPage(w http.ResponseWriter, r *http.Request, embed bool) error {
	cur := s.site.Load()
	v := cur.view
	q := r.URL.Query()
	name := strings.TrimSpace(q.Get("scenario"))
	if name == "" {
		if embed {
			return site.Invalidf(&site.Link{Label: "Choose a scenario", Href: v.Path("/playground")}, "An embedded playground needs a scenario: add scenario=NAME to the link.")
		}
		meta := site.PageMeta{Title: "Playground", Description: "Pick a scenario and break it: deliver, redeliver, crash and replay messages against a real SQLite ledger.", Canonical: "/playground", Section: "playground"}
		return s.writeRendered(w, r, site.Page(v, meta), scenarioPicker(v, pickerCards(v)))
	}
	sc, err := playground.LookupScenario(name)
	if err != nil {
		return site.CannotRun(&site.Link{Label: "Choose a scenario", Href: v.Path("/playground")}, err)
	}
	place := playurl.PagePlace(sc, embed)
	panel, err := panelRequest(q, v.Path(place.Href(place.Home)))
	if err != nil {
		return err
	}
	state, redirect, err := playurl.StateFromQuery(q, place.Home, sc.Workers)
	if err == nil && redirect {
		redirectToState(w, r, v.Path(place.Href(state)), v.Path(place.QueryHref(state)))
		return nil
	}
	state, q = withPanelOpen(panel, state, q)
	decoded := &state // the run starts from it, without decoding the query again
	if err != nil {
		decoded = nil // resolvePlayground says what was wrong, in place
	}
	fragment := wantsFragment(r)
	return s.serveRun(w, r, s.playgroundCompute(v, place, sc, q, decoded, func(pv *playgroundView) templ.Component {
		meta := site.PageMeta{Title: sc.Title + " · Playground", Description: sc.Story, Canonical: place.Href(pv.state), Section: "playground"}
		switch {
		case panel != 0:
			return morePanelAlone(pv, panel)
		case fragment:
			return LivePlayground(pv)
		case embed:
			return site.InLayout(site.EmbedPage(v, meta), embedPlaygroundPage(v, pv))
		}
		return site.InLayout(site.Page(v, meta), playgroundPage(v, pv))
	}))
}

// redirectToState sends a form's answer to the canonical URL of the state
// it produced (303, so Back skips the form URL); a fragment request stays one.
func redirectToState(w http.ResponseWriter, r *http.Request, target, withQuery string) {
	panel := r.URL.Query()[playurl.KeyPanel] // checked already (panelRequest): one name
	if wantsFragment(r) || len(panel) == 1 {
		path, _, _ := strings.Cut(withQuery, "#")
		target = path
		if wantsFragment(r) {
			target += "&" + fragmentParam + "=1"
		}
		if len(panel) == 1 {
			target += "&" + playurl.KeyPanel + "=" + playurl.QueryEscape(panel[0])
		}
	}
	w.Header()["Cache-Control"] = site.CacheControl[site.NoStore]
	http.Redirect(w, r, target, http.StatusSeeOther)
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
	if pre, ok := cur.blocks[lessonKey(slug, embed)][spec.ID]; ok {
		place = pre.place // its home parsed once, when the site was built
	} else {
		place = playurl.LessonPlace(slug, spec, embed)
	}
	panel, err := panelRequest(q, v.Path(lessonHref))
	if err != nil {
		return err
	}
	state, redirect, err := playurl.StateFromQuery(q, place.Home, sc.Workers)
	if err == nil && redirect {
		redirectToState(w, r, v.Path(place.Href(state)), v.Path(place.QueryHref(state)))
		return nil
	}
	state, q = withPanelOpen(panel, state, q)
	decoded := &state // the run starts from it, without decoding the query again
	if err != nil {
		decoded = nil // resolvePlayground says what was wrong, in place
	}
	fragment := wantsFragment(r)
	views := cur.blocks[lessonKey(slug, embed)]
	meta := site.PageMeta{Title: l.Title, Description: l.Summary, Canonical: playurl.LessonPath(l.Slug), Section: "lesson"}
	if !embed && pos.Prev != nil {
		meta.Prev = playurl.LessonPath(pos.Prev.Slug)
	}
	if !embed && pos.Next != nil {
		meta.Next = playurl.LessonPath(pos.Next.Slug)
	}
	return s.serveRun(w, r, s.playgroundCompute(v, place, sc, q, decoded, func(pv *playgroundView) templ.Component {
		if panel != 0 {
			return morePanelAlone(pv, panel)
		}
		if fragment {
			return LivePlayground(pv)
		}
		pgs := make(map[string]*playgroundView, len(views))
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

func lessonKey(slug string, embed bool) string {
	if embed {
		return "embed/" + slug
	}
	return slug
}

// blockViews runs every playground block of a lesson in its initial state,
// for the pre-rendered page. A block that cannot run keeps the static view
// of its spec (the lessons package has already reported why).
func blockViews(v *site.View, l *lessons.Lesson, embed bool) map[string]*playgroundView {
	out := map[string]*playgroundView{}
	for _, spec := range l.Playgrounds {
		sc, err := playground.LookupScenario(spec.Scenario)
		if err != nil {
			continue
		}
		place := playurl.LessonPlace(l.Slug, spec, embed)
		if place.Home.Events == nil {
			continue // the script does not parse
		}
		if spec.Ledger != "" && v.Ledgers == nil {
			if pv := recordedBlockView(v, place, sc, spec); pv != nil {
				out[spec.ID] = pv
			}
			continue // never run on SQLite in its place
		}
		req, err := place.Home.Request(sc, v.Ledgers) // no learner's handler: only the ledger can fail
		if err != nil {
			continue
		}
		req.Probe = controlsProbe(sc, place.Home)
		tr, err := playground.Run(context.Background(), req)
		if err != nil {
			continue
		}
		out[spec.ID] = newPlaygroundView(v, place, place.Home, tr, sc)
	}
	return out
}

// writeRendered writes a page or fragment rendered for this request, to be
// revalidated by its ETag.
func (s *Server) writeRendered(w http.ResponseWriter, r *http.Request, layout, content templ.Component) error {
	return site.WriteHTML(w, r, http.StatusOK, site.Revalidate, layout, content)
}

// ----- GET /api/v1/run -----

// serveRunAPI answers the trace of a run as JSON (the schema is the
// playground package's Trace) through the admission path; bad input is a
// 400 {"error", "field"} from the one error path, a run over its budget a
// 422 {"error", "field": "budget", "limit"}.
func (s *Server) serveRunAPI(w http.ResponseWriter, r *http.Request) error {
	req, err := playurl.RequestFromQuery(r.URL.Query(), s.ledgers)
	if err != nil {
		return err
	}
	return s.serveRun(w, r, s.apiRunCompute(req))
}
