package workshop

import (
	"context"
	"slices"
)

// OpenLessons is how many of the room's lessons (a prefix of
// room.Lessons) its learners may open, by the instructor's pace pushes in
// order: "open up to lesson N" opens the first N and locks the rest;
// "everyone to lesson N" opens at least the first N (learners are sent
// there). Without an "open" push every lesson is open.
func OpenLessons(room Room, pushes []Event) int {
	open := len(room.Lessons)
	limited := false
	for _, e := range pushes {
		if e.Kind != KindPace {
			continue
		}
		switch e.Detail {
		case PaceOpen:
			open, limited = e.Number, true
		case PaceGoto:
			if limited {
				open = max(open, e.Number)
			}
		}
	}
	return min(max(open, 0), len(room.Lessons))
}

// LessonLocked tells whether a lesson is closed to the room's learners:
// it is one of the room's lessons past the first open ones. Lessons the
// room does not cover are never locked.
func LessonLocked(room Room, open int, slug string) bool {
	i := slices.Index(room.Lessons, slug)
	return i >= open
}

// pushPage is how many pushes OpenLessonsNow reads at a time.
const pushPage = 500

// OpenLessonsNow reads the room's pushes and returns OpenLessons.
func (s *Service) OpenLessonsNow(ctx context.Context, room Room) (int, error) {
	var pushes []Event
	after := int64(0)
	for {
		evs, err := s.store.Events(ctx, room.ID, after, true, pushPage)
		if err != nil {
			return 0, err
		}
		pushes = append(pushes, evs...)
		if len(evs) < pushPage {
			return OpenLessons(room, pushes), nil
		}
		after = evs[len(evs)-1].ID
	}
}
