package workshop

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"idemlab/internal/english"
	"io"
	"strconv"
	"strings"
	"time"
)

// Kind is what an event says happened.
type Kind string

// Learner events: what a learner's browser sends (Source browser), except
// KindExerciseChecked, which only the server records (Service.RecordCheck).
const (
	KindLessonOpened    Kind = "lesson_opened"    // Lesson
	KindGoalReached     Kind = "goal_reached"     // Lesson, Item: the goal
	KindQuizAnswered    Kind = "quiz_answered"    // Lesson, Item: the question, Passed: answered right (if graded)
	KindExerciseChecked Kind = "exercise_checked" // Exercise, Passed, Detail: the counterexample's script, Playground: its playground state; recorded by the server
	KindHintUsed        Kind = "hint_used"        // Exercise, Number: which hint
	// KindPredictionMade: a "predict, then run" question answered: Lesson,
	// Item: the playground's id on the page, Passed: the prediction was right.
	KindPredictionMade Kind = "prediction_made"
	KindHandRaised     Kind = "hand_raised"
	KindHandLowered    Kind = "hand_lowered"
	// KindChaosRun is a learner's playground re-run after a chaos push:
	// Number: the push's event id, Item: the handler (its playground and
	// name), Passed: the handler held before the fault and still holds.
	KindChaosRun Kind = "chaos_run"
)

// KindJoined is recorded by the store with each new learner, so that
// followers of the room hear of them; KindRenamed (Item: the new name,
// Detail: the old) and KindRemoved with the instructor's changes to a seat.
const (
	KindJoined  Kind = "joined"
	KindRenamed Kind = "renamed"
	KindRemoved Kind = "removed"
)

// Idempotency keys of the seat changes the store records. A client's keys
// use no '#' (ParseKey), so they never collide with these.
const RemovedKey = "#removed"

// RenamedKey is the key of a rename at a time: each rename is its own event.
func RenamedKey(at time.Time) string { return "#renamed-" + strconv.FormatInt(at.UnixNano(), 10) }

// Instructor pushes: what every learner of the room receives.
const (
	KindPace      Kind = "pace"       // Detail: PaceGoto or PaceOpen, Number: the lesson (1-based), Lesson: its slug
	KindCountdown Kind = "countdown"  // Exercise, Number: seconds
	KindChaos     Kind = "chaos"      // Detail: the fault's name (see Faults)
	KindRoomEnded Kind = "room_ended" // sent once, when the room ends
)

// Pace modes.
const (
	PaceGoto = "goto" // everyone to lesson N
	PaceOpen = "open" // lessons up to N are open
)

// Push tells whether learners receive events of this kind.
func (k Kind) Push() bool {
	switch k {
	case KindPace, KindCountdown, KindChaos, KindRoomEnded:
		return true
	}
	return false
}

// learnerKinds are the kinds a learner's browser may send.
var learnerKinds = []Kind{KindLessonOpened, KindGoalReached, KindQuizAnswered, KindPredictionMade, KindHintUsed, KindHandRaised, KindHandLowered, KindChaosRun}

// Source says who vouches for an event.
type Source string

const (
	// SourceBrowser: the learner's browser reported it (a goal met, a
	// quiz answered): the server did not see it happen, and a view labels
	// it as reported.
	SourceBrowser Source = "browser"
	// SourceServer: the server saw it (a check it ran, a join, a push).
	SourceServer Source = "server"
)

// Event is one thing that happened in a room. ID orders a room's events
// (it is the server-sent events id a reconnecting view resumes after).
type Event struct {
	ID        int64
	RoomID    int64
	LearnerID int64 // 0 for the instructor's pushes
	Kind      Kind
	Lesson    string
	Exercise  string
	Item      string
	Passed    bool
	Detail    string
	// Playground is, for a failed check, the counterexample's playground
	// state with the learner's handler: a query string the web layer's URL
	// codec wrote and checked, opaque here (so the class view can open it
	// on the projector in one click).
	Playground string
	Number     int
	At         time.Time
	// Source is who reported the event; empty reads as SourceBrowser
	// (events stored before sources were recorded came from browsers).
	Source Source
}

// Reporter is e's source, SourceBrowser when none is recorded.
func (e Event) Reporter() Source {
	if e.Source == "" {
		return SourceBrowser
	}
	return e.Source
}

// Limits of a learner's event. A browser's events carry ids only (a check's
// counterexample and playground come from the server), so 2 KB is ample.
const (
	MaxEventBytes      = 2 << 10
	maxSlugLen         = 100
	maxDetailBytes     = 2 << 10
	MaxPlaygroundBytes = 12 << 10 // a handler (4 KB) and a script, query-escaped
	maxHints           = 20
)

// eventBody is the JSON a learner's browser posts.
type eventBody struct {
	Kind           string `json:"kind"`
	Lesson         string `json:"lesson,omitempty"`
	Goal           string `json:"goal,omitempty"`
	Quiz           string `json:"quiz,omitempty"`
	Correct        *bool  `json:"correct,omitempty"`
	Exercise       string `json:"exercise,omitempty"`
	Passed         *bool  `json:"passed,omitempty"`
	Counterexample string `json:"counterexample,omitempty"`
	Playground     string `json:"playground,omitempty"`
	Hint           int    `json:"hint,omitempty"`
	Push           int64  `json:"push,omitempty"`
	Handler        string `json:"handler,omitempty"`
	Survived       *bool  `json:"survived,omitempty"`
	Prediction     string `json:"prediction,omitempty"`
}

// DecodeEvent reads a learner's event from its JSON body, such as
// {"kind":"exercise_checked","exercise":"dedupe-1","passed":false,"counterexample":"deliver m1"}.
// Errors name the field at fault. The returned event has no room, learner,
// id or time yet.
func DecodeEvent(r io.Reader) (Event, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxEventBytes+1))
	if err != nil {
		return Event{}, err
	}
	if len(data) > MaxEventBytes {
		return Event{}, inputErrorf("body", "an event is at most %d bytes", MaxEventBytes)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var b eventBody
	if err := dec.Decode(&b); err != nil {
		return Event{}, jsonInputError(err)
	}
	if dec.More() {
		return Event{}, inputErrorf("body", "one JSON object only; something follows it")
	}
	return b.event()
}

// jsonInputError turns encoding/json's error into one that names the field.
func jsonInputError(err error) error {
	var typeErr *json.UnmarshalTypeError
	var syntaxErr *json.SyntaxError
	switch {
	case errors.As(err, &typeErr) && typeErr.Field == "":
		return inputErrorf("body", "want a JSON object, got a JSON %s", typeErr.Value)
	case errors.As(err, &typeErr):
		return inputErrorf(typeErr.Field, "want a %s, got a JSON %s", typeErr.Type, typeErr.Value)
	case errors.As(err, &syntaxErr):
		return inputErrorf("body", "not JSON at byte %d: %v", syntaxErr.Offset, err)
	case errors.Is(err, io.EOF):
		return inputErrorf("body", "empty; want a JSON object such as {\"kind\":\"lesson_opened\",\"lesson\":\"01-intro\"}")
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		name := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
		if name == "" {
			return inputErrorf("body", "a field with an empty name is not a field of an event")
		}
		return inputErrorf(english.Truncate(name, 40), "not a field of an event")
	default:
		return inputErrorf("body", "not an event: %v", err)
	}
}

func (b eventBody) event() (Event, error) {
	e := Event{Kind: Kind(b.Kind)}
	need := func(field, value string) error {
		if value == "" {
			return inputErrorf(field, "%s needs a %s", b.Kind, field)
		}
		return checkSlug(field, value)
	}
	forbid := map[string]bool{"lesson": b.Lesson != "", "goal": b.Goal != "", "quiz": b.Quiz != "", "correct": b.Correct != nil,
		"exercise": b.Exercise != "", "passed": b.Passed != nil, "counterexample": b.Counterexample != "", "playground": b.Playground != "", "hint": b.Hint != 0,
		"push": b.Push != 0, "handler": b.Handler != "", "survived": b.Survived != nil, "prediction": b.Prediction != ""}
	allow := func(fields ...string) error {
		for _, f := range fields {
			delete(forbid, f)
		}
		for _, f := range []string{"lesson", "goal", "quiz", "correct", "exercise", "passed", "counterexample", "playground", "hint", "push", "handler", "survived", "prediction"} {
			if forbid[f] {
				return inputErrorf(f, "%s has no %s", b.Kind, f)
			}
		}
		return nil
	}
	var err error
	switch e.Kind {
	case KindExerciseChecked:
		return Event{}, inputErrorf("kind", "exercise_checked is recorded by the server when it runs a check; a browser does not send it")
	case KindLessonOpened:
		err = errors.Join(allow("lesson"), need("lesson", b.Lesson))
		e.Lesson = b.Lesson
	case KindGoalReached:
		err = errors.Join(allow("lesson", "goal"), need("lesson", b.Lesson), need("goal", b.Goal))
		e.Lesson, e.Item = b.Lesson, b.Goal
	case KindQuizAnswered:
		// correct is given when the quiz grades answers; a self-check
		// quiz (the answer revealed) leaves it out.
		err = errors.Join(allow("lesson", "quiz", "correct"), need("lesson", b.Lesson), need("quiz", b.Quiz))
		e.Lesson, e.Item = b.Lesson, b.Quiz
		e.Passed = b.Correct != nil && *b.Correct
	case KindPredictionMade:
		err = errors.Join(allow("lesson", "prediction", "correct"), need("lesson", b.Lesson), need("prediction", b.Prediction))
		if err == nil && b.Correct == nil {
			err = inputErrorf("correct", "prediction_made needs correct: true or false")
		}
		e.Lesson, e.Item = b.Lesson, b.Prediction
		e.Passed = b.Correct != nil && *b.Correct
	case KindHintUsed:
		err = errors.Join(allow("exercise", "hint"), need("exercise", b.Exercise))
		if err == nil && (b.Hint < 1 || b.Hint > maxHints) {
			err = inputErrorf("hint", "a hint number from 1 to %d", maxHints)
		}
		e.Exercise, e.Number = b.Exercise, b.Hint
	case KindChaosRun:
		err = errors.Join(allow("push", "handler", "survived"), need("handler", b.Handler))
		switch {
		case err != nil:
		case b.Push <= 0:
			err = inputErrorf("push", "chaos_run needs the chaos push's id (a positive number)")
		case b.Survived == nil:
			err = inputErrorf("survived", "chaos_run needs survived: true or false")
		}
		e.Number, e.Item = int(b.Push), b.Handler
		e.Passed = b.Survived != nil && *b.Survived
	case KindHandRaised, KindHandLowered:
		err = allow()
	case "":
		err = inputErrorf("kind", "missing; one of %s", kindList())
	default:
		err = inputErrorf("kind", "%q is not an event a learner sends; one of %s", english.Truncate(b.Kind, 40), kindList())
	}
	if err != nil {
		return Event{}, firstError(err)
	}
	return e, nil
}

// firstError unwraps errors.Join to its first error, so a message names one field.
func firstError(err error) error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()[0]
	}
	return err
}

func kindList() string {
	names := make([]string, len(learnerKinds))
	for i, k := range learnerKinds {
		names[i] = string(k)
	}
	return strings.Join(names, ", ")
}

// checkSlug accepts the ids lessons, exercises, goals and quizzes use:
// letters, digits, '-', '_', '.', at most 100 characters.
func checkSlug(field, s string) error {
	if len(s) > maxSlugLen {
		return inputErrorf(field, "at most %d characters", maxSlugLen)
	}
	for i, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') {
			return inputErrorf(field, "character %d, %q: ids use letters, digits, '-', '_' and '.'", i+1, r)
		}
	}
	return nil
}

// Fingerprint is what an idempotency key is bound to: a hash of the event's
// meaning (kind and fields), so that the same event sent again matches
// whatever the JSON's spacing or field order, and a different one does not.
func (e Event) Fingerprint() [32]byte {
	text := fmt.Appendf(nil, "%q %q %q %q %q %t %d",
		e.Kind, e.Lesson, e.Exercise, e.Item, e.Detail, e.Passed, e.Number)
	if e.Playground != "" { // only then, so keys stored before it existed still match
		text = fmt.Appendf(text, " %q", e.Playground)
	}
	if e.Source == SourceServer { // likewise: browsers' keys stored before sources match
		text = fmt.Appendf(text, " server")
	}
	return sha256.Sum256(text)
}

// Key is an idempotency key made by a client: 8 to 100 characters of
// letters, digits, '-', '_', ':' and '.' (a UUID fits).
type Key string

// ParseKey checks an Idempotency-Key header or form field.
func ParseKey(text string) (Key, error) {
	if text == "" {
		return "", inputErrorf("Idempotency-Key", "missing: every event carries a key the client made (a UUID, say), so a retry is recognised")
	}
	if len(text) < 8 || len(text) > 100 {
		return "", inputErrorf("Idempotency-Key", "8 to 100 characters; this one has %d", len(text))
	}
	for i, r := range text {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == ':' || r == '.') {
			return "", inputErrorf("Idempotency-Key", "character %d, %q: use letters, digits, '-', '_', ':' and '.'", i+1, r)
		}
	}
	return Key(text), nil
}
