package workshopweb

import (
	"errors"
	"idemlab/web/site"
	"net/http"
	"time"

	"idemlab/workshop"
)

// learnerCookieAge keeps a learner's seat for the default retention.
const learnerCookieAge = 30 * 24 * 60 * 60

func (s *Pages) serveJoinPage(w http.ResponseWriter, r *http.Request) error {
	if _, err := s.workshopOn(); err != nil {
		return err
	}
	code := r.URL.Query().Get("code")
	if len(code) > 20 {
		code = ""
	}
	return site.WriteHTML(w, r, http.StatusOK, site.NoStore, site.Page(s.View(), site.PageMeta{Title: "Join a workshop", Section: "workshop"}), joinPage(s.View(), code, formKey()))
}

// serveJoin joins a room. Wrong codes are limited per client, so codes
// cannot be guessed (a class behind one address joins freely); the form's
// key makes a double submit one learner.
func (s *Pages) serveJoin(w http.ResponseWriter, r *http.Request) error {
	ws, err := s.workshopOn()
	if err != nil {
		return err
	}
	client := s.Limiter.ClientOf(r)
	if ok, retry := ws.joins.Take(client, 0); !ok { // a token left, none taken: only wrong codes cost
		return &site.Error{Status: http.StatusTooManyRequests, Field: "code", RetryAfter: retry,
			Message: "Too many wrong codes from this address; wait a minute and try again."}
	}
	if err := parseForm(w, r); err != nil {
		return err
	}
	key, err := parseFormKey(r)
	if err != nil {
		return err
	}
	code, err := workshop.ParseCode(r.PostFormValue("code"))
	if err != nil {
		ws.joins.Charge(client, 1)
		return workshopErr(err)
	}
	address := s.Limiter.AddressOf(r)
	_, l, err := ws.svc.JoinFrom(r.Context(), address, code, key, r.PostFormValue("name"))
	if errors.Is(err, workshop.ErrNotFound) {
		ws.joins.Charge(client, 1)
		return wsError(http.StatusNotFound, "code", "No room has the code "+string(code)+". Check it with your instructor.")
	}
	if err != nil {
		return workshopErr(err)
	}
	// The address's fair share counts its seats from the join on, before
	// each one's first click.
	s.Limiter.SeatsJoined(address, ws.svc.SeatsJoinedFrom(address))
	s.setCookie(w, ws, LearnerCookie, string(l.Token), learnerCookieAge)
	s.redirect(w, r, "/room")
	return nil
}

type learnerRoomView struct {
	room        workshop.Room
	learner     workshop.Learner
	resumeURL   string
	embedToken  string // the token, only when it came in the URL (an embed)
	lessons     []lessonLink
	lastEventID int64
	formKey     string
}

type lessonLink struct{ slug, title string }

// serveLearnerRoom is a learner's page in their room. Opened from a resume
// link (?ws=…), it sets the cookie and redirects to drop the token from the
// address bar and history.
func (s *Pages) serveLearnerRoom(w http.ResponseWriter, r *http.Request) error {
	ws, room, l, err := s.learner(r)
	if err != nil {
		return err
	}
	if r.URL.Query().Has(learnerTokenParam) {
		s.setCookie(w, ws, LearnerCookie, string(l.Token), learnerCookieAge)
		s.redirect(w, r, "/room")
		return nil
	}
	last, err := lastPushID(r, ws, room.ID)
	if err != nil {
		return err
	}
	title := s.lessonTitler()
	lv := learnerRoomView{room: room, learner: l, lastEventID: last, formKey: formKey(),
		resumeURL: s.siteURL(r, "/room?"+learnerTokenParam+"="+string(l.Token))}
	for _, slug := range room.Lessons {
		lv.lessons = append(lv.lessons, lessonLink{slug, title(slug)})
	}
	return site.WriteHTML(w, r, http.StatusOK, site.NoStore, site.Page(s.View(), site.PageMeta{Title: room.Name, Section: "workshop"}), learnerRoomPage(s.View(), lv))
}

// lastPushID is the id of the room's last push, where a learner's stream
// starts when it has no Last-Event-ID: old pushes are not replayed.
func lastPushID(r *http.Request, ws *State, roomID int64) (int64, error) {
	var last int64
	for {
		evs, err := ws.svc.Store().Events(r.Context(), roomID, last, true, 1000)
		if err != nil {
			return 0, err
		}
		if len(evs) == 0 {
			return last, nil
		}
		last = evs[len(evs)-1].ID
	}
}

// serveHandForm raises or lowers the learner's hand from the room page's
// form (no JavaScript needed); the form's key makes a double click one event.
func (s *Pages) serveHandForm(w http.ResponseWriter, r *http.Request) error {
	ws, _, l, err := s.learner(r)
	if err != nil {
		return err
	}
	if err := parseForm(w, r); err != nil {
		return err
	}
	key, err := parseFormKey(r)
	if err != nil {
		return err
	}
	e := workshop.Event{Kind: workshop.KindHandLowered}
	switch r.PostFormValue("raised") {
	case "yes":
		e.Kind = workshop.KindHandRaised
	case "no":
	default:
		return wsError(http.StatusBadRequest, "raised", "raised is yes or no.")
	}
	if _, _, err := ws.svc.Record(r.Context(), l, key, e); err != nil {
		return workshopErr(err)
	}
	s.redirect(w, r, "/room")
	return nil
}

// learnerJSON is what a learner may read about themselves: nothing of
// other learners.
type learnerJSON struct {
	Room        string   `json:"room"`
	Code        string   `json:"code"`
	Name        string   `json:"name"`
	Open        bool     `json:"open"`
	Lessons     []string `json:"lessons"`
	Exercises   []string `json:"exercises"`
	LastEventID int64    `json:"last_event_id"`
}

func (s *Pages) serveLearnerAPI(w http.ResponseWriter, r *http.Request) error {
	ws, room, l, err := s.learner(r)
	if err != nil {
		return err
	}
	last, err := lastPushID(r, ws, room.ID)
	if err != nil {
		return err
	}
	return site.WriteJSON(w, r, http.StatusOK, site.NoStore, learnerJSON{Room: room.Name, Code: string(room.Code), Name: l.Name, Open: room.Open(),
		Lessons: room.Lessons, Exercises: room.Exercises, LastEventID: last})
}

// eventAck is the answer to a recorded event, the same bytes for the first
// request and every replay of its key (the stored response).
type eventAck struct {
	ID   int64         `json:"id"`
	Kind workshop.Kind `json:"kind"`
	At   string        `json:"at"`
}

// serveLearnerEvent records one progress event: the browser's
// Idempotency-Key and the event are stored in one transaction
// (workshop.Store.Append). A replay gets the stored answer with
// Idempotent-Replayed: true, a concurrent duplicate 409, the key with
// another body 422.
func (s *Pages) serveLearnerEvent(w http.ResponseWriter, r *http.Request) error {
	ws, _, l, err := s.learner(r)
	if err != nil {
		return err
	}
	key, err := workshop.ParseKey(r.Header.Get("Idempotency-Key"))
	if err != nil {
		return workshopErr(err)
	}
	e, err := workshop.DecodeEvent(http.MaxBytesReader(w, r.Body, workshop.MaxEventBytes+1))
	if err != nil {
		return workshopErr(err)
	}
	stored, replayed, err := ws.svc.Record(r.Context(), l, key, e)
	if err != nil {
		return workshopErr(err)
	}
	if replayed {
		w.Header().Set("Idempotent-Replayed", "true")
	}
	return site.WriteJSON(w, r, http.StatusCreated, site.NoStore, eventAck{ID: stored.ID, Kind: stored.Kind, At: stored.At.UTC().Format(time.RFC3339Nano)})
}
