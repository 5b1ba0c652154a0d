package playview

import (
	"context"
	"errors"
	"fmt"
	"idemlab/web/admit"
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
const FragmentParam = "fragment"

// playPages is the live playground feature: /playground,
// /embed/playground, /api/v1/run, and the runs of a lesson's blocks,
// through the one admission path.
type Pages struct {
	Adm        *admit.Admission
	Metrics    *site.Metrics
	Ledgers    *playground.PostgresLedgers // nil: SQLite ledgers only
	LedgerGate *admit.LedgerGate           // nil without PostgreSQL ledgers
	Limiter    func() *admit.RateLimiter   // the server's, charged by a run's CPU
	// Admit takes a token from the request's client (its seat in a room,
	// else its address), or refuses it; its context names the client
	// (admit.RateLimiter.WithClient), whose shares the run is held to: a
	// quarter of the slots, one PostgreSQL ledger at a time.
	Admit func(r *http.Request) (context.Context, error)
	View  func() *site.View // the current course's
}

// routes are the playground's own URLs.
func (s *Pages) Routes() []site.Route {
	return []site.Route{
		{Pattern: "GET /playground", Serve: s.servePlayground},
		{Pattern: "GET /embed/playground", Serve: s.serveEmbedPlayground},
		{Pattern: "GET /api/v1/run", Serve: s.serveRunAPI},
	}
}

func WantsFragment(r *http.Request) bool { return r.URL.Query().Get(FragmentParam) == "1" }

// runPlayground runs a state and computes its view. Bad input is a
// *playground.InputError (resolvePlayground shows it in place).
func (s *Pages) runPlayground(ctx context.Context, budget *playground.Budget, usage *playground.Usage, v *site.View, place playurl.Place, sc *playground.Scenario, state playurl.State) (*View, error) {
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
	return NewView(v, place, state, tr, sc), nil
}

// ----- /playground and /embed/playground -----

func (s *Pages) servePlayground(w http.ResponseWriter, r *http.Request) error {
	return s.servePlaygroundPage(w, r, false)
}

func (s *Pages) serveEmbedPlayground(w http.ResponseWriter, r *http.Request) error {
	return s.servePlaygroundPage(w, r, true)
}

func (s *Pages) servePlaygroundPage(w http.ResponseWriter, r *http.Request, embed bool) error {
	v := s.View()
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
	panel, err := PanelRequest(q, v.Path(place.Href(place.Home)))
	if err != nil {
		return err
	}
	state, redirect, err := playurl.StateFromQuery(q, place.Home, sc.Workers)
	if err == nil && redirect {
		RedirectToState(w, r, v.Path(place.Href(state)), v.Path(place.QueryHref(state)))
		return nil
	}
	state, q = WithPanelOpen(panel, state, q)
	decoded := &state // the run starts from it, without decoding the query again
	if err != nil {
		decoded = nil // resolvePlayground says what was wrong, in place
	}
	fragment := WantsFragment(r)
	return s.ServeRun(w, r, s.PlaygroundCompute(v, place, sc, q, decoded, func(pv *View) templ.Component {
		meta := site.PageMeta{Title: sc.Title + " · Playground", Description: sc.Story, Canonical: place.Href(pv.state), Section: "playground"}
		switch {
		case panel != 0:
			return MorePanelAlone(pv, panel)
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
func RedirectToState(w http.ResponseWriter, r *http.Request, target, withQuery string) {
	panel := r.URL.Query()[playurl.KeyPanel] // checked already (panelRequest): one name
	if WantsFragment(r) || len(panel) == 1 {
		path, _, _ := strings.Cut(withQuery, "#")
		target = path
		if WantsFragment(r) {
			target += "&" + FragmentParam + "=1"
		}
		if len(panel) == 1 {
			target += "&" + playurl.KeyPanel + "=" + playurl.QueryEscape(panel[0])
		}
	}
	w.Header()["Cache-Control"] = site.CacheControl[site.NoStore]
	http.Redirect(w, r, target, http.StatusSeeOther)
}

func LessonKey(slug string, embed bool) string {
	if embed {
		return "embed/" + slug
	}
	return slug
}

// blockViews runs every playground block of a lesson in its initial state,
// for the pre-rendered page. A block that cannot run keeps the static view
// of its spec (the lessons package has already reported why).
func BlockViews(v *site.View, l *lessons.Lesson, embed bool) map[string]*View {
	out := map[string]*View{}
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
		out[spec.ID] = NewView(v, place, place.Home, tr, sc)
	}
	return out
}

// writeRendered writes a page or fragment rendered for this request, to be
// revalidated by its ETag.
func (s *Pages) writeRendered(w http.ResponseWriter, r *http.Request, layout, content templ.Component) error {
	return site.WriteHTML(w, r, http.StatusOK, site.Revalidate, layout, content)
}

// ----- GET /api/v1/run -----

// serveRunAPI answers the trace of a run as JSON (the schema is the
// playground package's Trace) through the admission path; bad input is a
// 400 {"error", "field"} from the one error path, a run over its budget a
// 422 {"error", "field": "budget", "limit"}.
func (s *Pages) serveRunAPI(w http.ResponseWriter, r *http.Request) error {
	req, err := playurl.RequestFromQuery(r.URL.Query(), s.Ledgers)
	if err != nil {
		return err
	}
	return s.ServeRun(w, r, s.apiRunCompute(req))
}
