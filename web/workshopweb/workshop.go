package workshopweb

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"idemlab/web/admit"
	"idemlab/web/site"
	"log/slog"
	"net/http"
	"strings"

	"idemlab/workshop"
)

// Config turns on workshop mode (see package workshop).
type Config struct {
	// Service holds the rooms. Nil: workshop routes answer 404.
	Service *workshop.Service
	// InstructorKey is the secret of the instructor link; every instructor
	// page and action needs it. It must be at least 16 characters.
	InstructorKey string
	// WrongCodesPerMinute is how many wrong join codes one client may try
	// per minute (0: 10), so codes cannot be guessed.
	WrongCodesPerMinute int
	// Gate checks instructor keys (failures limited per client, a key
	// rotated in its source taken up); nil: a gate for InstructorKey alone.
	Gate *workshop.InstructorGate
}

// Cookie names. Both are HttpOnly, SameSite=Lax, Secure under https.
const (
	InstructorCookie = "idemlab_instructor"
	LearnerCookie    = "idemlab_learner"
)

// learnerTokenParam carries a learner's token in a URL: the resume link,
// and embeds, where a third-party iframe gets no cookie.
const learnerTokenParam = "ws"

// State is the server's workshop mode, nil when it is off.
type State struct {
	svc *workshop.Service
	key []byte
	// joins limits wrong join codes per client with the server's one
	// mechanism, a token bucket (ratelimit.go): only a wrong code takes a
	// token, so a class behind one address joins freely, and a guesser
	// gets WrongCodesPerMinute tries at once, then one every 60/N seconds.
	joins  *admit.RateLimiter
	secure bool
	gate   *workshop.InstructorGate
	// streams counts the live streams open, by seat, room and address (limits.go).
	streams streamCaps
}

func NewState(cfg *Config, publicURL string) (*State, error) {
	if cfg == nil || cfg.Service == nil {
		return nil, nil
	}
	if len(cfg.InstructorKey) < 16 {
		return nil, errors.New("web: the instructor key must be at least 16 characters")
	}
	perMinute := cfg.WrongCodesPerMinute
	if perMinute <= 0 {
		perMinute = 10
	}
	return &State{
		svc:    cfg.Service,
		key:    []byte(cfg.InstructorKey),
		joins:  admit.NewRateLimiter(float64(perMinute)/60, float64(perMinute), false), // clients are named by the server's limiter (clientOf)
		secure: strings.HasPrefix(publicURL, "https://"),
		gate:   instructorGate(cfg),
	}, nil
}

// Pages is the workshop feature: the instructor's and the
// learners' pages, streams and exports. workshop is nil when workshop mode
// is off (every route answers 404); the rest is what it needs of the server.
type Pages struct {
	Workshop     *State
	Base, Origin string             // from the public URL
	Limiter      *admit.RateLimiter // names a request's client (ClientOf)
	View         func() *site.View  // the current course's
	Logger       *slog.Logger       // for what a learner's request cannot be told (a check not recorded)
}

// Routes are the routes of workshop mode, part of the one route list.
func (s *Pages) Routes() []site.Route {
	return append([]site.Route{
		{Pattern: "GET /workshop", Serve: s.serveInstructorHome},
		{Pattern: "POST /workshop/rooms", Serve: s.serveCreateRoom},
		{Pattern: "GET /workshop/rooms/{id}", Serve: s.serveClassView},
		{Pattern: "GET /workshop/rooms/{id}/projector", Serve: s.serveProjector},
		{Pattern: "GET /workshop/rooms/{id}/stream", Serve: s.serveClassStream},
		{Pattern: "POST /workshop/rooms/{id}/push", Serve: s.servePush},
		{Pattern: "POST /workshop/rooms/{id}/end", Serve: s.serveEndRoom},
		{Pattern: "POST /workshop/rooms/{id}/delete", Serve: s.serveDeleteRoom},
		{Pattern: "GET /workshop/rooms/{id}/export.csv", Serve: s.serveExportCSV},
		{Pattern: "GET /workshop/rooms/{id}/export.json", Serve: s.serveExportJSON},
		{Pattern: "GET /join", Serve: s.serveJoinPage},
		{Pattern: "POST /join", Serve: s.serveJoin},
		{Pattern: "GET /room", Serve: s.serveLearnerRoom},
		{Pattern: "POST /room/hand", Serve: s.serveHandForm},
		{Pattern: "GET /api/v1/room", Serve: s.serveLearnerAPI},
		{Pattern: "POST /api/v1/room/events", Serve: s.serveLearnerEvent},
		{Pattern: "GET /api/v1/room/stream", Serve: s.serveLearnerStream},
	}, s.drillRoutes()...) // workshop_drill.go
}

// workshopOn returns the workshop state, or a 404 when workshop mode is off.
func (s *Pages) workshopOn() (*State, error) {
	if s.Workshop == nil {
		return nil, wsError(http.StatusNotFound, "", "Workshop mode is off on this server.")
	}
	return s.Workshop, nil
}

// instructor checks the instructor key from the cookie set by the instructor
// link, in constant time.
func (s *Pages) instructor(r *http.Request) (*State, error) {
	ws, err := s.workshopOn()
	if err != nil {
		return nil, err
	}
	c, err := r.Cookie(InstructorCookie)
	if err == nil {
		err = s.checkInstructorKey(r, ws, c.Value)
	}
	if err != nil {
		if isRateRefusal(err) {
			return nil, err
		}
		return nil, wsError(http.StatusForbidden, "", "Instructor pages need the instructor key. Open the instructor link the server printed when it started (it ends in ?key=…).")
	}
	return ws, nil
}

// setCookie sets one of our cookies: HttpOnly, SameSite=Lax, Secure under
// https, for the whole site. maxAge < 0 deletes it.
func (s *Pages) setCookie(w http.ResponseWriter, ws *State, name, value string, maxAge int) {
	http.SetCookie(w, &http.Cookie{
		Name: name, Value: value, Path: s.Base + "/", MaxAge: maxAge,
		HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: ws.secure,
	})
}

// learnerTokenFrom finds the learner's token: in the URL (resume links,
// embeds) first, else in the cookie.
func learnerTokenFrom(r *http.Request) (workshop.Token, bool, error) {
	if t := r.URL.Query().Get(learnerTokenParam); t != "" {
		tok, err := workshop.ParseToken(t)
		return tok, true, err
	}
	c, err := r.Cookie(LearnerCookie)
	if err != nil {
		return "", false, wsError(http.StatusUnauthorized, "", "You are not in a workshop room on this browser. Join one with its code, or open your resume link.")
	}
	tok, err := workshop.ParseToken(c.Value)
	return tok, false, err
}

// learner finds the learner a request comes from, and their room.
func (s *Pages) learner(r *http.Request) (*State, workshop.Room, workshop.Learner, error) {
	ws, err := s.workshopOn()
	if err != nil {
		return nil, workshop.Room{}, workshop.Learner{}, err
	}
	tok, _, err := learnerTokenFrom(r)
	if err != nil {
		return nil, workshop.Room{}, workshop.Learner{}, workshopErr(err)
	}
	room, l, err := ws.svc.Resume(r.Context(), tok)
	if err != nil {
		if errors.Is(err, workshop.ErrNotFound) {
			return nil, room, l, wsError(http.StatusUnauthorized, "", "This resume link or cookie belongs to no room: the room may have been deleted. Join again with the room's code.")
		}
		return nil, room, l, err
	}
	return ws, room, l, nil
}

// wsError is a workshop answer other than success, for the one error path:
// its status, the request field to blame, and a message in the visitor's
// terms (under /api/ it is JSON {"error", "field"}).
func wsError(status int, field, message string) error {
	return &site.Error{Status: status, Field: field, Message: message}
}

// workshopErr gives workshop's errors their status and a message a person
// can act on; anything else stays an internal error.
func workshopErr(err error) error {
	var input *workshop.InputError
	if err := workshopLimitErr(err); err != nil {
		return err
	}
	switch {
	case errors.As(err, &input):
		return wsError(http.StatusBadRequest, input.Field, input.Error())
	case errors.Is(err, workshop.ErrNotFound):
		return wsError(http.StatusNotFound, "", "There is no such room. Check the code, or ask your instructor.")
	case errors.Is(err, workshop.ErrRoomEnded):
		return wsError(http.StatusGone, "", "This room has ended: it takes no more joins or progress. Thank you for coming!")
	case errors.Is(err, workshop.ErrKeyInProgress):
		return wsError(http.StatusConflict, "Idempotency-Key", "A request with this Idempotency-Key is being processed right now; retry in a moment to get its answer.")
	case errors.Is(err, workshop.ErrKeyReused):
		return wsError(http.StatusUnprocessableEntity, "Idempotency-Key", "This Idempotency-Key was already used for a different request; make a new key for a new request.")
	}
	return err
}

// formKey makes the hidden idempotency key of a form: a resubmitted or
// double-clicked form carries the same key and changes nothing twice.
func formKey() string {
	var b [16]byte
	rand.Read(b[:])
	return "form-" + hex.EncodeToString(b[:])
}

// parseFormKey reads a form's key field.
func parseFormKey(r *http.Request) (workshop.Key, error) {
	k, err := workshop.ParseKey(r.PostFormValue("key"))
	if err != nil {
		return "", wsError(http.StatusBadRequest, "key", "This form has lost its hidden key; reload the page and submit it again.")
	}
	return k, nil
}

// maxFormBytes bounds every workshop form body.
const maxFormBytes = 16 << 10

// parseForm reads a small urlencoded form, naming what is wrong.
func parseForm(w http.ResponseWriter, r *http.Request) error {
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
	if err := r.ParseForm(); err != nil {
		return wsError(http.StatusBadRequest, "body", "The form could not be read: "+err.Error())
	}
	return nil
}

// redirect answers a form with 303 See Other.
func (s *Pages) redirect(w http.ResponseWriter, r *http.Request, path string) {
	http.Redirect(w, r, s.Base+path, http.StatusSeeOther)
}
