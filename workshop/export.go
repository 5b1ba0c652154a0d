package workshop

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
)

// ResultRow is one learner on one exercise in a room's export.
type ResultRow struct {
	Learner   string `json:"learner"`
	LearnerID int64  `json:"learner_id"`
	Exercise  string `json:"exercise"`
	Attempts  int    `json:"attempts"`
	// PassedAt is RFC 3339, empty if not passed.
	PassedAt string `json:"passed_at"`
	// SecondsToPass counts from the learner's first check or hint of the
	// exercise to the pass; -1 if not passed.
	SecondsToPass int64 `json:"seconds_to_pass"`
	HintsUsed     int   `json:"hints_used"`
}

// Results lists every learner × every exercise of the room, in joining
// order then the room's exercise order. A learner is named by Label, so
// same-named learners are told apart. Only the room's exercises are rows:
// events about others are refused (a browser's from before that rule are
// not listed).
func (c *Class) Results() []ResultRow {
	var rows []ResultRow
	for _, id := range c.order {
		p := c.learners[id]
		for _, ex := range c.Room.Exercises {
			row := ResultRow{Learner: p.Label, LearnerID: id, Exercise: ex, SecondsToPass: -1}
			if x := p.Exercises[ex]; x != nil {
				row.Attempts, row.HintsUsed = x.Attempts, x.Hints
				if !x.PassedAt.IsZero() {
					row.PassedAt = x.PassedAt.UTC().Format(time.RFC3339)
					row.SecondsToPass = int64(x.PassedAt.Sub(x.FirstAt) / time.Second)
				}
			}
			rows = append(rows, row)
		}
	}
	return rows
}

var resultHeader = []string{"learner", "learner_id", "exercise", "attempts", "passed_at", "seconds_to_pass", "hints_used"}

// WriteResultsCSV writes rows as CSV with a header line.
func WriteResultsCSV(w io.Writer, rows []ResultRow) error {
	cw := csv.NewWriter(w)
	cw.Write(resultHeader)
	for _, r := range rows {
		cw.Write([]string{csvSafe(r.Learner), strconv.FormatInt(r.LearnerID, 10), r.Exercise, strconv.Itoa(r.Attempts),
			r.PassedAt, strconv.FormatInt(r.SecondsToPass, 10), strconv.Itoa(r.HintsUsed)})
	}
	cw.Flush()
	return cw.Error()
}

// csvSafe keeps a display name from being read as a formula by a
// spreadsheet (CSV injection): a leading =, +, - or @ gets a quote.
func csvSafe(s string) string {
	if s != "" && (s[0] == '=' || s[0] == '+' || s[0] == '-' || s[0] == '@') {
		return "'" + s
	}
	return s
}

// Export is the JSON export of a room. Goals and Timeline are in the
// export Service.WriteExportJSON writes.
type Export struct {
	Room      string      `json:"room"`
	Code      Code        `json:"code"`
	CreatedAt string      `json:"created_at"`
	EndedAt   string      `json:"ended_at,omitempty"`
	Results   []ResultRow `json:"results"`
	Goals     []GoalRow   `json:"goals,omitempty"`
	Timeline  []Moment    `json:"timeline,omitempty"`
}

// GoalRow is one goal met, one quiz question answered (Quiz, with Correct
// when graded) or one "predict, then run" question answered (Prediction:
// the playground's id, with Correct). Source says who reported it:
// "browser" when the server did not see it happen.
type GoalRow struct {
	Learner    string `json:"learner"`
	LearnerID  int64  `json:"learner_id"`
	Lesson     string `json:"lesson"`
	Goal       string `json:"goal,omitempty"`
	Quiz       string `json:"quiz,omitempty"`
	Prediction string `json:"prediction,omitempty"`
	Correct    *bool  `json:"correct,omitempty"`
	Source     Source `json:"source"`
}

// GoalRows lists the goals met and quiz questions answered, per learner in
// joining order, each in name order.
func (c *Class) GoalRows() []GoalRow {
	var rows []GoalRow
	for _, id := range c.order {
		p := c.learners[id]
		for _, k := range slices.Sorted(maps.Keys(p.Goals)) {
			lesson, goal, _ := strings.Cut(k, "/")
			rows = append(rows, GoalRow{Learner: p.Label, LearnerID: id, Lesson: lesson, Goal: goal, Source: p.Goals[k]})
		}
		for _, k := range slices.Sorted(maps.Keys(p.Predictions)) {
			lesson, item, _ := strings.Cut(k, "/")
			pr := p.Predictions[k]
			rows = append(rows, GoalRow{Learner: p.Label, LearnerID: id, Lesson: lesson, Prediction: item, Correct: &pr.Correct, Source: pr.Source})
		}
		for _, k := range slices.Sorted(maps.Keys(p.Quizzes)) {
			lesson, quiz, _ := strings.Cut(k, "/")
			row := GoalRow{Learner: p.Label, LearnerID: id, Lesson: lesson, Quiz: quiz, Source: SourceBrowser}
			if p.Quizzes[k] {
				yes := true
				row.Correct = &yes
			}
			rows = append(rows, row)
		}
	}
	return rows
}

// Moment is one event of a room's timeline, as the export lists it.
type Moment struct {
	ID        int64  `json:"id"`
	At        string `json:"at"` // RFC 3339, milliseconds
	Learner   string `json:"learner,omitempty"`
	LearnerID int64  `json:"learner_id,omitempty"`
	Kind      Kind   `json:"kind"`
	Lesson    string `json:"lesson,omitempty"`
	Exercise  string `json:"exercise,omitempty"`
	Item      string `json:"item,omitempty"`
	Passed    *bool  `json:"passed,omitempty"` // checks, graded quizzes, chaos re-runs
	Detail    string `json:"detail,omitempty"`
	Number    int    `json:"number,omitempty"`
	Source    Source `json:"source"`
}

// moment lays out one event for the timeline.
func (c *Class) moment(e Event) Moment {
	m := Moment{ID: e.ID, At: e.At.UTC().Format("2006-01-02T15:04:05.000Z07:00"), LearnerID: e.LearnerID, Kind: e.Kind,
		Lesson: e.Lesson, Exercise: e.Exercise, Item: e.Item, Detail: e.Detail, Number: e.Number, Source: e.Reporter()}
	if p := c.learners[e.LearnerID]; p != nil {
		m.Learner = p.Label
	}
	switch e.Kind {
	case KindExerciseChecked, KindQuizAnswered, KindChaosRun, KindPredictionMade:
		passed := e.Passed
		m.Passed = &passed
	}
	return m
}

// WriteExportJSON writes the room's JSON export: the results, the goals
// and quiz answers (labelled as the browser's), and the timeline of every
// event, read from the store a page at a time.
func (s *Service) WriteExportJSON(ctx context.Context, w io.Writer, roomID int64) error {
	class, err := s.Class(ctx, roomID)
	if err != nil {
		return err
	}
	x := class.export()
	x.Goals = class.GoalRows()
	x.Timeline = []Moment{}
	for after := int64(0); after < class.LastEventID; {
		evs, err := s.store.Events(ctx, roomID, after, false, followBatch)
		if err != nil {
			return err
		}
		if len(evs) == 0 {
			break
		}
		for _, e := range evs {
			if e.ID > class.LastEventID {
				break // the export is of the class as read: nothing after it
			}
			x.Timeline = append(x.Timeline, class.moment(e))
		}
		after = evs[len(evs)-1].ID
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(x)
}

func (c *Class) export() Export {
	x := Export{Room: c.Room.Name, Code: c.Room.Code, CreatedAt: c.Room.CreatedAt.UTC().Format(time.RFC3339), Results: c.Results()}
	if !c.Room.Open() {
		x.EndedAt = c.Room.EndedAt.UTC().Format(time.RFC3339)
	}
	if x.Results == nil {
		x.Results = []ResultRow{}
	}
	return x
}

// LoadClass builds a room's class view from the store: room, learners, and
// every event so far.
func LoadClass(ctx context.Context, store Store, roomID int64) (*Class, error) {
	room, err := store.Room(ctx, roomID)
	if err != nil {
		return nil, err
	}
	learners, err := store.Learners(ctx, roomID)
	if err != nil {
		return nil, err
	}
	c := NewClass(room, learners)
	for after := int64(0); ; {
		evs, err := store.Events(ctx, roomID, after, false, followBatch)
		if err != nil {
			return nil, err
		}
		if len(evs) == 0 {
			return c, nil
		}
		for _, e := range evs {
			c.Apply(e)
		}
		after = evs[len(evs)-1].ID
	}
}
