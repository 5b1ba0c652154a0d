package workshopweb

import (
	"errors"
	"idemlab/web/site"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"idemlab/web/playurl"
	"idemlab/workshop"
)

// An instructor's drill-down into one learner (workshop.Service.Learner):
// their latest handler per exercise, every check with its counterexample
// and a link that replays it; and the forms that rename or remove them.
//
//	GET  /workshop/rooms/{id}/learners/{learner}          the drill-down
//	POST /workshop/rooms/{id}/learners/{learner}/rename   name=…
//	POST /workshop/rooms/{id}/learners/{learner}/remove   confirm=yes
//
// Both POSTs are idempotent by their natural key: renaming to the name the
// learner has changes nothing, and removing a learner who is gone lands on
// the class view all the same. Like every instructor POST they need the
// instructor cookie (SameSite=Lax) and pass the cross-origin protection.

// drillRoutes are the drill-down's routes, part of workshop mode's.
func (s *Pages) drillRoutes() []site.Route {
	return []site.Route{
		{Pattern: "GET /workshop/rooms/{id}/learners/{learner}", Serve: s.serveLearnerDrill},
		{Pattern: "POST /workshop/rooms/{id}/learners/{learner}/rename", Serve: s.serveRenameLearner},
		{Pattern: "POST /workshop/rooms/{id}/learners/{learner}/remove", Serve: s.serveRemoveLearner},
	}
}

type drillView struct {
	room      workshop.Room
	p         *workshop.LearnerProgress
	lesson    string
	exercises []drillExercise
	more      classRowMore
	renameKey string
}

type drillExercise struct {
	id       string
	handler  string // the handler of the latest check, if known
	attempts []drillAttempt
	passed   bool
	hints    int
}

type drillAttempt struct {
	n              int
	at             string
	passed         bool
	counterexample string
	replay         string // the site path that replays it, or ""
}

// learnerFromPath reads {learner} for a room's instructor.
func learnerFromPath(r *http.Request) (int64, error) {
	id, err := strconv.ParseInt(r.PathValue("learner"), 10, 64)
	if err != nil || id <= 0 {
		return 0, wsError(http.StatusNotFound, "learner", "There is no such learner in this room.")
	}
	return id, nil
}

func (s *Pages) serveLearnerDrill(w http.ResponseWriter, r *http.Request) error {
	ws, room, err := s.roomFromPath(r)
	if err != nil {
		return err
	}
	lid, err := learnerFromPath(r)
	if err != nil {
		return err
	}
	p, err := ws.svc.Learner(r.Context(), room.ID, lid)
	if errors.Is(err, workshop.ErrNotFound) {
		return wsError(http.StatusNotFound, "learner", "This learner is not in the room (any more): they may have been removed.")
	}
	if err != nil {
		return workshopErr(err)
	}
	title := s.lessonTitler()
	dv := drillView{room: room, p: p, lesson: title(p.Lesson), more: rowMore(p), renameKey: formKey()}
	for _, ex := range room.Exercises {
		x := p.Exercises[ex]
		de := drillExercise{id: ex}
		if x != nil {
			de.passed, de.hints = !x.PassedAt.IsZero(), x.Hints
			first := x.Attempts - len(x.History) // older checks than those kept
			for i, a := range x.History {
				da := drillAttempt{n: first + i + 1, at: a.At.UTC().Format(time.RFC3339), passed: a.Passed, counterexample: a.Counterexample}
				if a.Playground != "" {
					da.replay = playurl.SharedHref(a.Playground)
					if q, err := url.ParseQuery(a.Playground); err == nil && q.Get(playurl.KeyHandler) != "" {
						de.handler = q.Get(playurl.KeyHandler)
					}
				}
				de.attempts = append(de.attempts, da)
			}
		}
		dv.exercises = append(dv.exercises, de)
	}
	v := s.View()
	return site.WriteHTML(w, r, http.StatusOK, site.NoStore, site.Page(v, site.PageMeta{Title: p.Label + " · " + room.Name, Section: "workshop"}), learnerDrillPage(v, dv))
}

// serveRenameLearner renames a learner; the same name again changes nothing.
func (s *Pages) serveRenameLearner(w http.ResponseWriter, r *http.Request) error {
	ws, room, err := s.roomFromPath(r)
	if err != nil {
		return err
	}
	lid, err := learnerFromPath(r)
	if err != nil {
		return err
	}
	if err := parseForm(w, r); err != nil {
		return err
	}
	p, err := ws.svc.Learner(r.Context(), room.ID, lid)
	if err != nil {
		return workshopErr(err)
	}
	name := r.PostFormValue("name")
	if strings.TrimSpace(name) == p.Learner.Name { // as the service cleans it
		s.redirect(w, r, LearnerPath(room.ID, lid)) // a retried rename: done already
		return nil
	}
	if _, err := ws.svc.RenameLearner(r.Context(), room.ID, lid, name); err != nil {
		return workshopErr(err)
	}
	s.redirect(w, r, LearnerPath(room.ID, lid))
	return nil
}

// serveRemoveLearner takes a learner out of the room; removing one who is
// gone changes nothing and lands on the class view too.
func (s *Pages) serveRemoveLearner(w http.ResponseWriter, r *http.Request) error {
	ws, room, err := s.roomFromPath(r)
	if err != nil {
		return err
	}
	lid, err := learnerFromPath(r)
	if err != nil {
		return err
	}
	if err := parseForm(w, r); err != nil {
		return err
	}
	if r.PostFormValue("confirm") != "yes" {
		return wsError(http.StatusBadRequest, "confirm", "Tick the box to confirm: a removed learner's link stops working.")
	}
	err = ws.svc.RemoveLearner(r.Context(), room.ID, lid)
	if err != nil && !errors.Is(err, workshop.ErrNotFound) {
		return workshopErr(err)
	}
	s.forgetSeat(lid)
	s.redirect(w, r, RoomPath(room.ID))
	return nil
}
