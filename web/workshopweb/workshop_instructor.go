package workshopweb

import (
	"fmt"
	"idemlab/web/site"
	"net/http"
	"strconv"
	"strings"
	"time"

	"idemlab/internal/english"
	"idemlab/lessons"
	"idemlab/workshop"
)

// RoomPath is the site path of a room's class view.
func RoomPath(id int64) string { return "/workshop/rooms/" + strconv.FormatInt(id, 10) }

type exerciseChoice struct{ id, lesson string }

type instructorHomeView struct {
	rooms     []workshop.Room
	lessons   []*lessons.Lesson
	exercises []exerciseChoice
	formKey   string
}

// serveInstructorHome lists rooms. Opened from the instructor link
// (?key=…), it sets the instructor cookie and redirects to drop the key
// from the address bar and history.
func (s *Pages) serveInstructorHome(w http.ResponseWriter, r *http.Request) error {
	if key := r.URL.Query().Get("key"); key != "" {
		ws, err := s.workshopOn()
		if err != nil {
			return err
		}
		if err := s.checkInstructorKey(r, ws, key); err != nil {
			if isRateRefusal(err) {
				return err
			}
			return wsError(http.StatusForbidden, "key", "This instructor link's key is wrong. Copy the link the server printed when it started.")
		}
		s.setCookie(w, ws, InstructorCookie, key, 0)
		s.redirect(w, r, "/workshop")
		return nil
	}
	ws, err := s.instructor(r)
	if err != nil {
		return err
	}
	rooms, err := ws.svc.Store().Rooms(r.Context())
	if err != nil {
		return err
	}
	hv := instructorHomeView{rooms: rooms, formKey: formKey()}
	for _, l := range s.View().Course.Lessons {
		if l.IsReference() {
			continue
		}
		hv.lessons = append(hv.lessons, l)
		for _, x := range l.Exercises {
			hv.exercises = append(hv.exercises, exerciseChoice{x.ID, l.Title})
		}
	}
	return site.WriteHTML(w, r, http.StatusOK, site.NoStore, site.Page(s.View(), site.PageMeta{Title: "Workshops", Section: "workshop"}), instructorHome(s.View(), hv))
}

// serveCreateRoom creates a room from the form; the form's key makes a
// double submit create one room.
func (s *Pages) serveCreateRoom(w http.ResponseWriter, r *http.Request) error {
	ws, err := s.instructor(r)
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
	spec := workshop.RoomSpec{Name: r.PostFormValue("name"), Lessons: r.PostForm["lesson"], Exercises: r.PostForm["exercise"]}
	if err := checkRoomAgainstCourse(s.View().Course, spec); err != nil {
		return err
	}
	room, err := ws.svc.CreateRoom(r.Context(), key, spec)
	if err != nil {
		return workshopErr(err)
	}
	s.redirect(w, r, RoomPath(room.ID))
	return nil
}

// checkRoomAgainstCourse refuses lessons and exercises the course lacks.
func checkRoomAgainstCourse(course *lessons.Course, spec workshop.RoomSpec) error {
	if len(spec.Lessons) == 0 {
		return wsError(http.StatusBadRequest, "lesson", "Pick at least one lesson for the room.")
	}
	for _, slug := range spec.Lessons {
		if course.Lesson(slug) == nil {
			return wsError(http.StatusBadRequest, "lesson", fmt.Sprintf("There is no lesson %q in this course.", english.Truncate(slug, 80)))
		}
	}
	for _, id := range spec.Exercises {
		if course.Exercise(id) == nil {
			return wsError(http.StatusBadRequest, "exercise", fmt.Sprintf("There is no exercise %q in this course.", english.Truncate(id, 80)))
		}
	}
	return nil
}

// roomFromPath reads {id} and loads the room for an instructor.
func (s *Pages) roomFromPath(r *http.Request) (*State, workshop.Room, error) {
	ws, err := s.instructor(r)
	if err != nil {
		return nil, workshop.Room{}, err
	}
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id <= 0 {
		return nil, workshop.Room{}, wsError(http.StatusNotFound, "id", "There is no such room.")
	}
	room, err := ws.svc.Store().Room(r.Context(), id)
	if err != nil {
		return nil, room, workshopErr(err)
	}
	return ws, room, nil
}

// siteURL is the absolute address of a site path as another device must
// type it: from the public URL, else from the Host this request used.
func (s *Pages) siteURL(r *http.Request, path string) string {
	origin := s.Origin
	if origin == "" {
		scheme := "http"
		if r.TLS != nil {
			scheme = "https"
		}
		origin = scheme + "://" + r.Host
	}
	return origin + s.Base + path
}

// joinURL is the address learners type or scan.
func (s *Pages) joinURL(r *http.Request, code workshop.Code) string {
	return s.siteURL(r, "/join?code="+string(code))
}

type classPageView struct {
	room    workshop.Room
	joinURL string
	lessons []string // titles of the room's lessons, in order
	rows    []classRowView
	summary classSummaryView
	keys    map[string]string // form → idempotency key
	status  classStatusView   // pace, countdown, paging (workshop_classpage.go)
}

type classRowView struct {
	id          int64
	name        string
	lesson      string
	stuck       []string
	rank, order int
	cells       []classCell
	more        classRowMore // workshop_classpage.go
}

type classCell struct {
	exercise, state string // state: "", "failing", "passed"
	attempts        int
}

type classSummaryView struct {
	learners        int
	where           []workshop.LessonCount
	passed          []passedCount
	counterexamples []workshop.CounterexampleCount
	chaos           string
	// chaosSurvived of chaosRan handlers held after the last chaos push.
	chaosSurvived, chaosRan int
}

type passedCount struct {
	exercise string
	n        int
}

// learnerRowView lays out one learner's progress.
func learnerRowView(c *workshop.Class, p *workshop.LearnerProgress, order int, now time.Time, title func(string) string) classRowView {
	row := classRowView{id: p.Learner.ID, name: p.Label, lesson: title(p.Lesson), stuck: p.Stuck(now), order: order, rank: 3, more: rowMore(p)}
	if row.name == "" {
		row.name = p.Learner.Name
	}
	if len(row.stuck) > 0 {
		row.rank = map[string]int{workshop.StuckHand: 0, workshop.StuckFailures: 1, workshop.StuckSlow: 2}[row.stuck[0]]
	}
	for _, ex := range c.Room.Exercises {
		cell := classCell{exercise: ex}
		if x := p.Exercises[ex]; x != nil && x.Attempts > 0 {
			cell.attempts = x.Attempts
			cell.state = "failing"
			if !x.PassedAt.IsZero() {
				cell.state = "passed"
			}
		}
		row.cells = append(row.cells, cell)
	}
	return row
}

// summaryView lays out the room's summary; shape groups counterexamples
// (scriptShape, or a stream's memo of it).
func summaryView(c *workshop.Class, n int, title, shape func(string) string) classSummaryView {
	sv := classSummaryView{learners: n, where: c.Where(), counterexamples: c.Counterexamples(shape)}
	for i := range sv.where {
		sv.where[i].Lesson = title(sv.where[i].Lesson)
	}
	if len(sv.counterexamples) > 10 {
		sv.counterexamples = sv.counterexamples[:10]
	}
	for _, ex := range c.Room.Exercises {
		sv.passed = append(sv.passed, passedCount{ex, c.Passed(ex)})
	}
	if c.Chaos.ID != 0 {
		sv.chaos = chaosLabel(c.Chaos.Detail)
		sv.chaosSurvived, sv.chaosRan = c.ChaosSurvivors()
	}
	return sv
}

// lessonTitler names lessons by title, falling back to the slug.
func (s *Pages) lessonTitler() func(string) string {
	course := s.View().Course
	return func(slug string) string {
		if l := course.Lesson(slug); l != nil {
			return l.Title
		}
		return slug
	}
}

func (s *Pages) serveClassView(w http.ResponseWriter, r *http.Request) error {
	ws, room, err := s.roomFromPath(r)
	if err != nil {
		return err
	}
	cv, err := s.classView(r, ws, room)
	if err != nil {
		return err
	}
	return site.WriteHTML(w, r, http.StatusOK, site.NoStore, site.Page(s.View(), site.PageMeta{Title: room.Name, Section: "workshop"}), classPage(s.View(), cv))
}

func (s *Pages) serveProjector(w http.ResponseWriter, r *http.Request) error {
	_, room, err := s.roomFromPath(r)
	if err != nil {
		return err
	}
	join := s.joinURL(r, room.Code)
	qr, err := qrSVG(join)
	if err != nil {
		return err
	}
	return site.WriteHTML(w, r, http.StatusOK, site.NoStore, site.EmbedPage(s.View(), site.PageMeta{Title: room.Name, Section: "workshop"}), projectorPage(s.View(), room, join, qr))
}

// chaosFault is one fault the chaos conductor pushes. line is what a
// learner's playground appends to its script; {msg} stands for the last
// message the learner's script names.
type chaosFault struct{ Name, label, Line string }

var ChaosFaults = []chaosFault{
	{"lose-ack", "Lose the next ack", "redeliver {msg} lose-ack"},
	{"crash-mid-handler", "Crash a worker mid-handler", "redeliver {msg} crash-after 1"},
	{"expire-lease", "Expire a lease", "expire {msg}"},
	{"restart", "Restart the consumers", "restart A"},
	{"replay", "Replay the topic", "replay"},
	{"duplicate", "A duplicate arrives", "publish {msg}"},
}

func chaosByName(name string) (chaosFault, bool) {
	for _, f := range ChaosFaults {
		if f.Name == name {
			return f, true
		}
	}
	return chaosFault{}, false
}

func chaosLabel(name string) string {
	if f, ok := chaosByName(name); ok {
		return f.label
	}
	return name
}

// servePush records a pace, countdown or chaos push from the class view's
// forms. The form's key makes a double click push once.
func (s *Pages) servePush(w http.ResponseWriter, r *http.Request) error {
	ws, room, err := s.roomFromPath(r)
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
	e, err := PushFromForm(room, r.PostForm.Get)
	if err != nil {
		return err
	}
	if _, _, err := ws.svc.Push(r.Context(), room.ID, key, e); err != nil {
		return workshopErr(err)
	}
	s.redirect(w, r, RoomPath(room.ID))
	return nil
}

// PushFromForm reads a push form: kind=pace (mode, lesson: 1-based number
// in the room's list), kind=countdown (exercise, minutes), kind=chaos (fault).
func PushFromForm(room workshop.Room, get func(string) string) (workshop.Event, error) {
	switch kind := get("kind"); kind {
	case "pace":
		mode := get("mode")
		if mode != workshop.PaceGoto && mode != workshop.PaceOpen {
			return workshop.Event{}, wsError(http.StatusBadRequest, "mode", "Pace is “goto” (everyone to lesson N) or “open” (open up to lesson N).")
		}
		n, err := strconv.Atoi(get("lesson"))
		if err != nil || n < 1 || n > len(room.Lessons) {
			return workshop.Event{}, wsError(http.StatusBadRequest, "lesson", fmt.Sprintf("Pick a lesson from 1 to %d.", len(room.Lessons)))
		}
		return workshop.Event{Kind: workshop.KindPace, Detail: mode, Number: n, Lesson: room.Lessons[n-1]}, nil
	case "countdown":
		ex := get("exercise")
		found := false
		for _, x := range room.Exercises {
			found = found || x == ex
		}
		if !found {
			return workshop.Event{}, wsError(http.StatusBadRequest, "exercise", "Pick one of the room's exercises for the countdown.")
		}
		m, err := strconv.Atoi(get("minutes"))
		if err != nil || m < 1 || m > 120 {
			return workshop.Event{}, wsError(http.StatusBadRequest, "minutes", "A countdown lasts from 1 to 120 minutes.")
		}
		return workshop.Event{Kind: workshop.KindCountdown, Exercise: ex, Number: m * 60}, nil
	case "chaos":
		f, ok := chaosByName(get("fault"))
		if !ok {
			names := make([]string, len(ChaosFaults))
			for i, f := range ChaosFaults {
				names[i] = f.Name
			}
			return workshop.Event{}, wsError(http.StatusBadRequest, "fault", "Pick a fault: "+strings.Join(names, ", ")+".")
		}
		return workshop.Event{Kind: workshop.KindChaos, Detail: f.Name}, nil
	default:
		return workshop.Event{}, wsError(http.StatusBadRequest, "kind", fmt.Sprintf("%q is not a push; want pace, countdown or chaos.", english.Truncate(kind, 40)))
	}
}

func (s *Pages) serveEndRoom(w http.ResponseWriter, r *http.Request) error {
	ws, room, err := s.roomFromPath(r)
	if err != nil {
		return err
	}
	if _, err := ws.svc.EndRoom(r.Context(), room.ID); err != nil {
		return workshopErr(err)
	}
	s.redirect(w, r, RoomPath(room.ID))
	return nil
}

// serveDeleteRoom deletes a room now. Deleting is naturally idempotent: a
// second click finds nothing and lands on the room list all the same.
func (s *Pages) serveDeleteRoom(w http.ResponseWriter, r *http.Request) error {
	ws, err := s.instructor(r)
	if err != nil {
		return err
	}
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil {
		return wsError(http.StatusNotFound, "id", "There is no such room.")
	}
	if err := parseForm(w, r); err != nil {
		return err
	}
	if r.PostFormValue("confirm") != "yes" {
		return wsError(http.StatusBadRequest, "confirm", "Tick the box to confirm: deleting a room cannot be undone.")
	}
	if err := ws.svc.DeleteRoom(r.Context(), id); err != nil {
		return err
	}
	s.redirect(w, r, "/workshop")
	return nil
}

func (s *Pages) serveExportCSV(w http.ResponseWriter, r *http.Request) error {
	return s.serveExport(w, r, "csv")
}

func (s *Pages) serveExportJSON(w http.ResponseWriter, r *http.Request) error {
	return s.serveExport(w, r, "json")
}

func (s *Pages) serveExport(w http.ResponseWriter, r *http.Request, format string) error {
	ws, room, err := s.roomFromPath(r)
	if err != nil {
		return err
	}
	var buf strings.Builder
	contentType := "text/csv; charset=utf-8"
	if format == "csv" {
		var class *workshop.Class
		if class, err = ws.svc.Class(r.Context(), room.ID); err != nil {
			return workshopErr(err)
		}
		err = workshop.WriteResultsCSV(&buf, class.Results())
	} else {
		contentType = "application/json; charset=utf-8"
		err = workshopErr(ws.svc.WriteExportJSON(r.Context(), &buf, room.ID))
	}
	if err != nil {
		return err
	}
	w.Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename="room-%s.%s"`, strings.ReplaceAll(string(room.Code), "-", ""), format))
	site.WriteBody(w, r, http.StatusOK, []string{contentType}, site.NoStore, site.RequestPayload([]byte(buf.String()), ""))
	return nil
}
