package workshopweb

import (
	"fmt"
	"net/http"
	"strconv"
	"time"

	"idemlab/workshop"
)

// The class view's page of rows (workshop.ClassPage), and what each row
// shows beyond its exercises: online, lessons opened, goals, quizzes and
// predictions (those the browser reported counted apart), and the room's
// pace and countdown.

// classPageRows is how many learners one page of the class view shows.
const classPageRows = 100

// classRowMore is the rest of a learner's row.
type classRowMore struct {
	online             bool
	lastSeen           string // offline: when the server last heard of them (RFC 3339), or ""
	lastSeenText       string // the same as a person reads it
	lessonsOpened      int
	goals, goalsByPage int // goals met; of them, reported by the browser
	quizzes, quizRight int
	predictions        int
	predictionsByPage  int // reported by the browser
	predictionsRight   int
	drill              string // the drill-down's path
}

// rowMore lays out the rest of p's row.
func rowMore(p *workshop.LearnerProgress) classRowMore {
	m := classRowMore{online: p.Online, lessonsOpened: len(p.LessonsOpened), goals: len(p.Goals), quizzes: len(p.Quizzes), predictions: len(p.Predictions),
		drill: LearnerPath(p.Learner.RoomID, p.Learner.ID)}
	if !p.Online && !p.Contact.IsZero() {
		m.lastSeen = p.Contact.UTC().Format(time.RFC3339)
		m.lastSeenText = p.Contact.UTC().Format("15:04:05") + " UTC"
	}
	for _, src := range p.Goals {
		if src == workshop.SourceBrowser {
			m.goalsByPage++
		}
	}
	for _, right := range p.Quizzes {
		if right {
			m.quizRight++
		}
	}
	for _, pr := range p.Predictions {
		if pr.Source == workshop.SourceBrowser {
			m.predictionsByPage++
		}
		if pr.Correct {
			m.predictionsRight++
		}
	}
	return m
}

// learnerPath is the site path of a learner's drill-down.
func LearnerPath(roomID, learnerID int64) string {
	return RoomPath(roomID) + "/learners/" + strconv.FormatInt(learnerID, 10)
}

// classStatusView is the room's pace, countdown and the page of rows shown.
type classStatusView struct {
	pace          string
	countdown     string
	countdownEnds string // RFC 3339, for the page's clock
	learners      int
	page, pages   int
	prev, next    string // the other pages' paths, or ""
}

// classStatus lays out the page's status.
func classStatus(page workshop.ClassPage, now time.Time, title func(string) string) classStatusView {
	st := classStatusView{learners: page.Learners, page: page.Offset/classPageRows + 1, pages: max(1, (page.Learners+classPageRows-1)/classPageRows)}
	if e := page.Pace; e.ID != 0 {
		if e.Detail == workshop.PaceGoto {
			st.pace = fmt.Sprintf("Everyone to lesson %d: %s", e.Number, title(e.Lesson))
		} else {
			st.pace = fmt.Sprintf("Lessons 1 to %d open (up to %s)", e.Number, title(e.Lesson))
		}
	}
	if e := page.Countdown; e.ID != 0 {
		ends := e.At.Add(time.Duration(e.Number) * time.Second)
		st.countdownEnds = ends.UTC().Format(time.RFC3339)
		if left := ends.Sub(now); left > 0 {
			st.countdown = fmt.Sprintf("%s: %s left (ends %s UTC)", e.Exercise, left.Round(time.Second), ends.UTC().Format("15:04:05"))
		} else {
			st.countdown = fmt.Sprintf("%s: ended at %s UTC", e.Exercise, ends.UTC().Format("15:04:05"))
		}
	}
	base := RoomPath(page.Room.ID)
	if st.page > 1 {
		st.prev = base + "?page=" + strconv.Itoa(st.page-1)
	}
	if st.page < st.pages {
		st.next = base + "?page=" + strconv.Itoa(st.page+1)
	}
	return st
}

// classStreamPath is the path of the live feed of the page cv shows.
func classStreamPath(cv classPageView) string {
	p := RoomPath(cv.room.ID) + "/stream"
	if cv.status.page > 1 {
		p += "?page=" + strconv.Itoa(cv.status.page)
	}
	return p
}

// pageOffset reads ?page= (from 1) as the offset of its first row.
func pageOffset(r *http.Request) (int, error) {
	v := r.URL.Query().Get("page")
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > 1_000_000 {
		return 0, wsError(http.StatusBadRequest, "page", "page is a page number from 1.")
	}
	return (n - 1) * classPageRows, nil
}

// pageSummaryView lays out the room's summary from a page of the class view.
func pageSummaryView(page workshop.ClassPage, title func(string) string) classSummaryView {
	sv := classSummaryView{learners: page.Learners, where: page.Where, counterexamples: page.Counterexamples,
		chaosSurvived: page.ChaosSurvived, chaosRan: page.ChaosRan}
	for i := range sv.where {
		sv.where[i].Lesson = title(sv.where[i].Lesson)
	}
	for _, ex := range page.Room.Exercises {
		sv.passed = append(sv.passed, passedCount{ex, page.Passed[ex]})
	}
	if page.Chaos.ID != 0 {
		sv.chaos = chaosLabel(page.Chaos.Detail)
	}
	return sv
}

// classView lays out a page of the class view.
func (s *Pages) classView(r *http.Request, ws *State, room workshop.Room) (classPageView, error) {
	offset, err := pageOffset(r)
	if err != nil {
		return classPageView{}, err
	}
	now := time.Now()
	page, err := ws.svc.ClassPage(r.Context(), room.ID, now, offset, classPageRows, ScriptShape)
	if err != nil {
		return classPageView{}, workshopErr(err)
	}
	title := s.lessonTitler()
	cv := classPageView{room: page.Room, joinURL: s.joinURL(r, room.Code),
		keys: map[string]string{"pace": formKey(), "countdown": formKey(), "chaos": formKey(), "end": formKey(), "delete": formKey()}}
	for _, l := range room.Lessons {
		cv.lessons = append(cv.lessons, title(l))
	}
	rowsOf := &workshop.Class{Room: page.Room} // learnerRowView reads the room's exercises
	for _, p := range page.Rows {
		cv.rows = append(cv.rows, learnerRowView(rowsOf, p, p.Order, now, title))
	}
	cv.summary = pageSummaryView(page, title)
	cv.status = classStatus(page, now, title)
	return cv, nil
}
