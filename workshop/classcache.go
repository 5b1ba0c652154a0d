package workshop

import (
	"context"
	"errors"
	"sync"
	"time"
)

// The class view of a room is an aggregate of its events. The service keeps
// one per room, caught up from the store on each read with only the events
// after the last it applied, so a view costs the events since the last
// view, not every event of the room (2.8 s after 53k events, when each view
// read them all). A process reads a room's whole history once, at its
// first view.

// cachedClass is one room's aggregate; mu serialises catching up.
type cachedClass struct {
	mu    sync.Mutex
	class *Class
}

// maxCachedClasses bounds the rooms whose aggregates are kept.
const maxCachedClasses = 256

// catchUp returns the room's aggregate with every committed event applied,
// locked: the caller reads it and calls unlock.
func (s *Service) catchUp(ctx context.Context, roomID int64) (c *cachedClass, unlock func(), err error) {
	room, err := s.store.Room(ctx, roomID) // a deleted room is ErrNotFound here
	if err != nil {
		return nil, nil, err
	}
	s.mu.Lock()
	c = s.classes[roomID]
	if c == nil {
		if len(s.classes) >= maxCachedClasses {
			for id := range s.classes { // any one: it is read again if needed
				delete(s.classes, id)
				break
			}
		}
		c = &cachedClass{}
		s.classes[roomID] = c
	}
	s.mu.Unlock()
	c.mu.Lock()
	if err := s.catchUpLocked(ctx, c, room); err != nil {
		c.mu.Unlock()
		return nil, nil, err
	}
	return c, c.mu.Unlock, nil
}

func (s *Service) catchUpLocked(ctx context.Context, c *cachedClass, room Room) error {
	if c.class == nil {
		learners, err := s.store.Learners(ctx, room.ID)
		if err != nil {
			return err
		}
		c.class = NewClass(room, learners)
	}
	c.class.Room.EndedAt = room.EndedAt
	for {
		evs, err := s.store.Events(ctx, room.ID, c.class.LastEventID, false, followBatch)
		if err != nil {
			return err
		}
		if len(evs) == 0 {
			return nil
		}
		reloaded := false
		for _, e := range evs {
			if e.Kind == KindJoined && !c.class.Has(e.LearnerID) && !reloaded {
				// Learners joined since: read them, once per batch at most
				// (a removed learner's join finds nobody to add).
				learners, err := s.store.Learners(ctx, room.ID)
				if err != nil {
					return err
				}
				for _, l := range learners {
					c.class.AddLearner(l)
				}
				reloaded = true
			}
			c.class.Apply(e)
		}
	}
}

// Class returns the room's class view with every event so far applied: a
// copy the caller owns (the class stream applies the events it follows to
// it). It replaces LoadClass, which reads every event each time.
func (s *Service) Class(ctx context.Context, roomID int64) (*Class, error) {
	c, unlock, err := s.catchUp(ctx, roomID)
	if err != nil {
		return nil, err
	}
	defer unlock()
	return c.class.Clone(), nil
}

// ClassPage is one page of a room's class view and the room's summary.
type ClassPage struct {
	Room        Room
	LastEventID int64
	// Learners is how many learners the room has; Rows are those from
	// Offset on, in Class.Rows order (who needs help first), copies.
	Learners int
	Offset   int
	Rows     []*LearnerProgress
	// The summary, over every learner.
	Where           []LessonCount
	Passed          map[string]int // exercise → learners who passed it
	Counterexamples []CounterexampleCount
	ChaosSurvived   int
	ChaosRan        int
	// Pace is the last pace push, Chaos the last chaos push, Countdown
	// the last countdown push (zero if none): its end is At + Number s.
	Pace, Chaos, Countdown Event
}

// MaxClassPage is the most rows a ClassPage holds.
const MaxClassPage = 200

// maxCounterexampleGroups is how many counterexample groups a page lists.
const maxCounterexampleGroups = 10

// ClassPage returns rows offset… (at most limit, at most MaxClassPage) of
// the room's class view at now, with the summary; shape groups
// counterexamples as in Class.Counterexamples.
func (s *Service) ClassPage(ctx context.Context, roomID int64, now time.Time, offset, limit int, shape func(string) string) (ClassPage, error) {
	c, unlock, err := s.catchUp(ctx, roomID)
	if err != nil {
		return ClassPage{}, err
	}
	defer unlock()
	class := c.class
	rows := class.Rows(now)
	limit = min(max(limit, 0), MaxClassPage)
	offset = min(max(offset, 0), len(rows))
	page := ClassPage{Room: class.Room, LastEventID: class.LastEventID, Learners: len(rows), Offset: offset,
		Where: class.Where(), Passed: make(map[string]int), Pace: class.Pace, Chaos: class.Chaos, Countdown: class.Countdown}
	for _, p := range rows[offset:min(offset+limit, len(rows))] {
		q := p.clone()
		q.Online, q.Contact = s.Presence(q, now)
		page.Rows = append(page.Rows, q)
	}
	for _, ex := range class.Room.Exercises {
		page.Passed[ex] = class.Passed(ex)
	}
	page.Counterexamples = class.Counterexamples(shape)
	if len(page.Counterexamples) > maxCounterexampleGroups {
		page.Counterexamples = page.Counterexamples[:maxCounterexampleGroups]
	}
	if class.Chaos.ID != 0 {
		page.ChaosSurvived, page.ChaosRan = class.ChaosSurvivors()
	}
	return page, nil
}

// Learner returns one learner's progress in the room (a copy): the
// instructor's drill-down, with every check's counterexample and playground
// (ExerciseProgress.History). ErrNotFound if the learner is not in the room.
func (s *Service) Learner(ctx context.Context, roomID, learnerID int64) (*LearnerProgress, error) {
	c, unlock, err := s.catchUp(ctx, roomID)
	if err != nil {
		return nil, err
	}
	defer unlock()
	p := c.class.Learner(learnerID)
	if p == nil {
		return nil, ErrNotFound
	}
	q := p.clone()
	q.Online, q.Contact = s.Presence(q, s.now())
	return q, nil
}

// WarmClasses builds the class views of the open rooms now, so that the
// first view after a start does not read a room's whole history while the
// instructor waits. serve runs it in the background at start.
func (s *Service) WarmClasses(ctx context.Context) error {
	rooms, err := s.store.Rooms(ctx)
	if err != nil {
		return err
	}
	n := 0
	for _, room := range rooms {
		if !room.Open() || n >= maxCachedClasses/2 {
			continue
		}
		n++
		_, unlock, err := s.catchUp(ctx, room.ID)
		if err != nil {
			if errors.Is(err, ErrNotFound) {
				continue // deleted meanwhile
			}
			return err
		}
		unlock()
	}
	return nil
}
