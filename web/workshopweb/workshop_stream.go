package workshopweb

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"idemlab/web/playurl"
	"net/http"
	"strconv"
	"strings"
	"time"

	"idemlab/workshop"
)

// streamTick is how often a stream sends a keep-alive and the class view
// re-checks who has been on one lesson too long.
const streamTick = 20 * time.Second

// sseStream writes server-sent events.
type sseStream struct {
	w  http.ResponseWriter
	rc *http.ResponseController
}

// startStream answers with text/event-stream. The write deadline of the
// server (meant for pages) is lifted: a stream lasts as long as the page.
func startStream(w http.ResponseWriter, r *http.Request) (*sseStream, error) {
	rc := http.NewResponseController(w)
	if err := rc.SetWriteDeadline(time.Time{}); err != nil && !isNotSupported(err) {
		return nil, err
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no") // nginx: do not buffer the stream
	w.WriteHeader(http.StatusOK)
	s := &sseStream{w: w, rc: rc}
	fmt.Fprint(w, "retry: 2000\n\n")
	return s, rc.Flush()
}

func isNotSupported(err error) bool { return strings.Contains(err.Error(), "not supported") }

// send writes one event; id 0 leaves the client's Last-Event-ID as it was.
func (s *sseStream) send(id int64, event string, data []byte) error {
	var b bytes.Buffer
	if id > 0 {
		fmt.Fprintf(&b, "id: %d\n", id)
	}
	fmt.Fprintf(&b, "event: %s\n", event)
	for line := range bytes.SplitSeq(data, []byte("\n")) {
		b.WriteString("data: ")
		b.Write(line)
		b.WriteByte('\n')
	}
	b.WriteByte('\n')
	if _, err := s.w.Write(b.Bytes()); err != nil {
		return err
	}
	return s.rc.Flush()
}

func (s *sseStream) ping() error {
	if _, err := fmt.Fprint(s.w, ": ping\n\n"); err != nil {
		return err
	}
	return s.rc.Flush()
}

// ResumeFrom reads where a stream resumes: the Last-Event-ID a reconnecting
// EventSource sends, else ?after=; ok false when neither is given.
func ResumeFrom(r *http.Request) (after int64, ok bool, err error) {
	v := r.Header.Get("Last-Event-ID")
	field := "Last-Event-ID"
	if v == "" {
		v, field = r.URL.Query().Get("after"), "after"
	}
	if v == "" {
		return 0, false, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return 0, false, wsError(http.StatusBadRequest, field, field+" is the id of the last event received, a whole number ≥ 0.")
	}
	return n, true, nil
}

// follow runs svc.Follow in the background and hands its batches over a
// channel, so that the caller can also act on a timer; the channel closes
// when following stops.
func follow(ctx context.Context, svc *workshop.Service, roomID, after int64, pushesOnly bool) <-chan []workshop.Event {
	batches := make(chan []workshop.Event)
	go func() {
		defer close(batches)
		svc.Follow(ctx, roomID, after, pushesOnly, func(evs []workshop.Event) error {
			select {
			case batches <- evs:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		})
	}()
	return batches
}

// serveClassStream is the class view's live feed: a "row" event with a
// learner's re-rendered row whenever their progress changes, and a
// "summary" event with the room's chart and counts. It follows one page of
// the view (?page=, as the page it feeds; classPageRows rows): only the
// rows on that page are sent, a row that moves off it gets a "remove"
// event, and one that moves onto it its row. A fresh connection gets the
// page's rows; one that resumes (Last-Event-ID) gets those changed since.
func (s *Pages) serveClassStream(w http.ResponseWriter, r *http.Request) error {
	ws, room, err := s.roomFromPath(r)
	if err != nil {
		return err
	}
	after, resumed, err := ResumeFrom(r)
	if err != nil {
		return err
	}
	release, err := ws.streams.take("instructor of room "+strconv.FormatInt(room.ID, 10), room.ID, s.Limiter.AddressOf(r)) // limits.go
	if err != nil {
		return err
	}
	defer release()
	offset, err := pageOffset(r)
	if err != nil {
		return err
	}
	class, err := ws.svc.Class(r.Context(), room.ID)
	if err != nil {
		return workshopErr(err)
	}
	stream, err := startStream(w, r)
	if err != nil {
		return nil // the client is gone
	}
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	title := s.lessonTitler()
	shape := memoShape() // the summary goes out with every batch: parse each script once
	order := make(map[int64]int)
	sentRank := make(map[int64]int)
	sentOnline := make(map[int64]bool)
	// onPage are the rows the page shows now, as far as this stream told it.
	pageIDs := func(now time.Time) map[int64]bool {
		rows := class.Rows(now)
		ids := make(map[int64]bool, classPageRows)
		for _, p := range rows[min(offset, len(rows)):min(offset+classPageRows, len(rows))] {
			ids[p.Learner.ID] = true
		}
		return ids
	}
	onPage := make(map[int64]bool)
	if resumed { // the page has its rows already
		onPage = pageIDs(time.Now())
	}
	sendRows := func(ids map[int64]bool, lastID int64) error {
		now := time.Now()
		if joined := class.Joined(); len(joined) > len(order) { // only joins add learners
			for _, p := range joined[len(order):] {
				order[p.Learner.ID] = len(order)
			}
		}
		cur := pageIDs(now)
		for id := range onPage {
			if !cur[id] { // moved to another page
				if err := stream.send(0, "remove", []byte(strconv.FormatInt(id, 10))); err != nil {
					return err
				}
			}
		}
		for id := range cur {
			if !onPage[id] { // moved onto this page
				ids[id] = true
			}
		}
		onPage = cur
		for id := range ids {
			p := class.Learner(id)
			if p == nil || !cur[id] {
				continue
			}
			p.Online, p.Contact = ws.svc.Presence(p, now)
			row := learnerRowView(class, p, order[id], now, title)
			sentRank[id], sentOnline[id] = row.rank, p.Online
			var buf bytes.Buffer
			if err := classRow(row).Render(ctx, &buf); err != nil {
				return err
			}
			if err := stream.send(0, "row", buf.Bytes()); err != nil {
				return err
			}
		}
		var buf bytes.Buffer
		if err := classSummary(s.View(), summaryView(class, len(order), title, shape)).Render(ctx, &buf); err != nil {
			return err
		}
		return stream.send(lastID, "summary", buf.Bytes())
	}
	changed := make(map[int64]bool)
	for _, p := range class.Joined() {
		if !resumed || p.LastEventID > after {
			changed[p.Learner.ID] = true
		}
	}
	if err := sendRows(changed, class.LastEventID); err != nil {
		return nil
	}
	batches := follow(ctx, ws.svc, room.ID, class.LastEventID, false)
	tick := time.NewTicker(streamTick)
	defer tick.Stop()
	for {
		select {
		case evs, ok := <-batches:
			if !ok {
				return nil
			}
			changed := make(map[int64]bool)
			for _, e := range evs {
				if e.Kind == workshop.KindJoined && !class.Has(e.LearnerID) {
					learners, err := ws.svc.Store().Learners(ctx, room.ID)
					if err != nil {
						return nil
					}
					for _, l := range learners {
						class.AddLearner(l)
					}
				}
				if p := class.Apply(e); p != nil {
					changed[p.Learner.ID] = true
				}
				if e.Kind == workshop.KindRemoved { // the row leaves the view
					delete(changed, e.LearnerID)
					delete(onPage, e.LearnerID)
					if err := stream.send(0, "remove", []byte(strconv.FormatInt(e.LearnerID, 10))); err != nil {
						return nil
					}
				}
			}
			if err := sendRows(changed, evs[len(evs)-1].ID); err != nil {
				return nil
			}
		case <-tick.C:
			// Time alone makes a learner stuck (long on one lesson).
			changed := make(map[int64]bool)
			now := time.Now()
			for _, p := range class.Rows(now) {
				if rank := learnerRowView(class, p, 0, now, title).rank; rank != sentRank[p.Learner.ID] || ws.svc.Online(p, now) != sentOnline[p.Learner.ID] {
					changed[p.Learner.ID] = true // sendRows sends those on the page
				}
			}
			if len(changed) > 0 {
				if err := sendRows(changed, 0); err != nil {
					return nil
				}
			} else if err := stream.ping(); err != nil {
				return nil
			}
		}
	}
}

// PushJSON is a push as a learner's page receives it.
type PushJSON struct {
	ID          int64         `json:"id"`
	Kind        workshop.Kind `json:"kind"`
	Mode        string        `json:"mode,omitempty"`
	Lesson      int           `json:"lesson,omitempty"`
	LessonTitle string        `json:"lesson_title,omitempty"`
	LessonURL   string        `json:"lesson_url,omitempty"`
	// Closed are the room's lessons an "open up to" push locks: a page
	// showing one of them reloads, and the server shows the lock.
	Closed   []string `json:"closed,omitempty"`
	Exercise string   `json:"exercise,omitempty"`
	Seconds  int      `json:"seconds,omitempty"`
	Ends     string   `json:"ends,omitempty"`
	Fault    string   `json:"fault,omitempty"`
	Label    string   `json:"label,omitempty"`
	Line     string   `json:"line,omitempty"`
}

func (s *Pages) pushView(room workshop.Room, e workshop.Event) PushJSON {
	p := PushJSON{ID: e.ID, Kind: e.Kind}
	switch e.Kind {
	case workshop.KindPace:
		p.Mode, p.Lesson = e.Detail, e.Number
		if e.Detail == workshop.PaceOpen && e.Number < len(room.Lessons) {
			p.Closed = room.Lessons[max(e.Number, 0):]
		}
		p.LessonTitle = s.lessonTitler()(e.Lesson)
		p.LessonURL = s.Base + playurl.LessonPath(e.Lesson)
	case workshop.KindCountdown:
		p.Exercise, p.Seconds = e.Exercise, e.Number
		p.Ends = e.At.Add(time.Duration(e.Number) * time.Second).UTC().Format(time.RFC3339)
	case workshop.KindChaos:
		f, _ := chaosByName(e.Detail)
		p.Fault, p.Label, p.Line = f.Name, f.label, f.Line
	}
	return p
}

// serveLearnerStream is a learner's feed of the instructor's pushes, and
// nothing else: never another learner's progress.
func (s *Pages) serveLearnerStream(w http.ResponseWriter, r *http.Request) error {
	ws, room, l, err := s.learner(r)
	if err != nil {
		return err
	}
	release, err := ws.streams.take("learner "+strconv.FormatInt(l.ID, 10), room.ID, s.Limiter.AddressOf(r)) // limits.go
	if err != nil {
		return err
	}
	defer release()
	defer ws.svc.Connect(l.ID)() // the learner is online while a page of theirs is open
	after, ok, err := ResumeFrom(r)
	if err != nil {
		return err
	}
	if !ok {
		if after, err = lastPushID(r, ws, room.ID); err != nil {
			return err
		}
	}
	stream, err := startStream(w, r)
	if err != nil {
		return nil
	}
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	batches := follow(ctx, ws.svc, room.ID, after, true)
	tick := time.NewTicker(streamTick)
	defer tick.Stop()
	for {
		select {
		case evs, ok := <-batches:
			if !ok {
				return nil
			}
			for _, e := range evs {
				data, err := json.Marshal(s.pushView(room, e))
				if err != nil {
					return err
				}
				if err := stream.send(e.ID, "push", data); err != nil {
					return nil
				}
			}
		case <-tick.C:
			if err := stream.ping(); err != nil {
				return nil
			}
		}
	}
}
