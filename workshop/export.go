package workshop

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"io"
	"slices"
	"strconv"
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

// Results lists every learner × every exercise of the room (and any other
// exercise a learner worked on), in joining order then exercise order.
func (c *Class) Results() []ResultRow {
	var rows []ResultRow
	for _, id := range c.order {
		p := c.learners[id]
		exercises := slices.Clone(c.Room.Exercises)
		var extra []string
		for ex := range p.Exercises {
			if !slices.Contains(exercises, ex) {
				extra = append(extra, ex)
			}
		}
		slices.Sort(extra)
		for _, ex := range append(exercises, extra...) {
			row := ResultRow{Learner: p.Learner.Name, LearnerID: id, Exercise: ex, SecondsToPass: -1}
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

// Export is the JSON export of a room.
type Export struct {
	Room      string      `json:"room"`
	Code      Code        `json:"code"`
	CreatedAt string      `json:"created_at"`
	EndedAt   string      `json:"ended_at,omitempty"`
	Results   []ResultRow `json:"results"`
}

// WriteResultsJSON writes the room and rows as one JSON document.
func (c *Class) WriteResultsJSON(w io.Writer) error {
	x := Export{Room: c.Room.Name, Code: c.Room.Code, CreatedAt: c.Room.CreatedAt.UTC().Format(time.RFC3339), Results: c.Results()}
	if !c.Room.Open() {
		x.EndedAt = c.Room.EndedAt.UTC().Format(time.RFC3339)
	}
	if x.Results == nil {
		x.Results = []ResultRow{}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(x)
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
