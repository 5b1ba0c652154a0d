package workshop

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"time"
)

// When a learner counts as stuck.
const (
	// StuckFailedChecks failed checks of one exercise without a pass.
	StuckFailedChecks = 3
	// StuckIdle on one lesson without progress.
	StuckIdle = 10 * time.Minute
)

// Reasons a learner is shown as stuck, most urgent first.
const (
	StuckHand     = "raised hand"
	StuckFailures = "failed checks"
	StuckSlow     = "long on one lesson"
)

// ExerciseProgress is one learner's record on one exercise.
type ExerciseProgress struct {
	Attempts       int
	FailsSincePass int // failed checks since the last pass (or the start)
	Hints          int // the highest hint number opened
	FirstAt        time.Time
	PassedAt       time.Time // zero until passed
	Counterexample string    // of the last failed check, if the last check failed
	Playground     string    // its playground state (see Event.Playground), if the page sent it
	// History is every check the server recorded, oldest first (at most
	// MaxAttemptsKept: the latest), for the instructor's drill-down.
	History []Attempt
}

// Prediction is a learner's answer to a "predict, then run" question.
type Prediction struct {
	Correct bool
	Source  Source // who reported it
}

// Attempt is one check of one exercise, as the server recorded it.
type Attempt struct {
	EventID        int64
	At             time.Time
	Passed         bool
	Counterexample string // of a failed check
	// Playground is the playground state with the learner's handler as it
	// was checked (a failure's counterexample, or a pass), when web gave it:
	// the drill-down's "replay it" link.
	Playground string
}

// MaxAttemptsKept is how many checks of one exercise a learner's history keeps.
const MaxAttemptsKept = 50

// LearnerProgress is one row of the class view.
type LearnerProgress struct {
	Learner      Learner
	Lesson       string // the lesson open last
	LessonSince  time.Time
	LastProgress time.Time
	HandRaised   bool
	Exercises    map[string]*ExerciseProgress
	LastEventID  int64
	// ChaosRuns are the learner's handlers re-run after the last chaos
	// push: handler → it survived.
	ChaosRuns map[string]bool
	// Order is the learner's place in joining order, from 0.
	Order int
	// Goals are the goals met ("lesson/goal" → who reported it: a view
	// labels SourceBrowser as reported by the browser), Quizzes the quiz
	// questions answered and Predictions the "predict, then run" questions
	// ("lesson/question" or "lesson/playground" → answered right; quizzes
	// are from the browser, predictions from either).
	Goals       map[string]Source
	Quizzes     map[string]bool
	Predictions map[string]Prediction
	// LessonsOpened are the lessons the learner opened, in first-opened order.
	LessonsOpened []string
	// LastSeen is the time of the learner's last event of any kind.
	LastSeen time.Time
	// Online is set by Service.ClassPage and Service.Learner (Service.Online):
	// the learner has the room open now.
	Online bool
	// Contact is when the server last heard of the learner (set with
	// Online, Service.Presence): their last event, or their last stream.
	Contact time.Time
	// Label tells same-named learners apart: the name, and for the second
	// "Ada" to join and later ones, " (2)", " (3)"…
	Label string
}

// Stuck says why the learner needs help now, or nil.
func (p *LearnerProgress) Stuck(now time.Time) []string {
	var why []string
	if p.HandRaised {
		why = append(why, StuckHand)
	}
	for _, x := range p.Exercises {
		if x.FailsSincePass >= StuckFailedChecks && x.PassedAt.IsZero() {
			why = append(why, StuckFailures)
			break
		}
	}
	if p.Lesson != "" && now.Sub(p.LastProgress) >= StuckIdle {
		why = append(why, StuckSlow)
	}
	return why
}

// Class is the state of a room as the class view shows it, built by
// applying the room's events in order. It is not safe for concurrent use.
type Class struct {
	Room        Room
	LastEventID int64
	learners    map[int64]*LearnerProgress
	order       []int64
	// Pace is the last pace push, Chaos the last chaos push, Countdown the
	// last countdown push (zero if none).
	Pace, Chaos, Countdown Event
	names                  map[string]int // learners per name, for Label
}

// NewClass starts a class view of room with its learners so far.
func NewClass(room Room, learners []Learner) *Class {
	c := &Class{Room: room, learners: make(map[int64]*LearnerProgress)}
	for _, l := range learners {
		c.AddLearner(l)
	}
	return c
}

// AddLearner adds a learner who joined (a no-op for one already there).
func (c *Class) AddLearner(l Learner) {
	if _, ok := c.learners[l.ID]; ok {
		return
	}
	if c.names == nil {
		c.names = make(map[string]int)
	}
	c.names[l.Name]++
	label := l.Name
	if n := c.names[l.Name]; n > 1 {
		label = fmt.Sprintf("%s (%d)", l.Name, n)
	}
	c.learners[l.ID] = &LearnerProgress{Learner: l, LastProgress: l.JoinedAt, LastSeen: l.JoinedAt, Exercises: make(map[string]*ExerciseProgress), Order: len(c.order), Label: label}
	c.order = append(c.order, l.ID)
}

// Has tells whether the learner is in the class.
func (c *Class) Has(learnerID int64) bool { _, ok := c.learners[learnerID]; return ok }

// Apply folds one event into the class and returns the learner it changed
// (nil for pushes, and for learners not added yet).
func (c *Class) Apply(e Event) *LearnerProgress {
	if e.ID > c.LastEventID {
		c.LastEventID = e.ID
	}
	switch e.Kind {
	case KindPace:
		c.Pace = e
	case KindCountdown:
		c.Countdown = e
	case KindChaos:
		c.Chaos = e
		for _, p := range c.learners {
			p.ChaosRuns = nil
		}
	case KindRoomEnded:
		c.Room.EndedAt = e.At
	}
	p := c.learners[e.LearnerID]
	if p == nil || e.LearnerID == 0 {
		return nil
	}
	switch e.Kind {
	case KindRemoved:
		delete(c.learners, e.LearnerID)
		c.order = slices.DeleteFunc(c.order, func(id int64) bool { return id == e.LearnerID })
		return nil
	case KindRenamed:
		c.names[p.Learner.Name]--
		p.Learner.Name = e.Item
		c.names[e.Item]++
		p.Label = e.Item
		if n := c.names[e.Item]; n > 1 {
			p.Label = fmt.Sprintf("%s (%d)", e.Item, n)
		}
		return p
	}
	p.LastEventID = e.ID
	if e.At.After(p.LastSeen) {
		p.LastSeen = e.At
	}
	exercise := func() *ExerciseProgress {
		x := p.Exercises[e.Exercise]
		if x == nil {
			x = &ExerciseProgress{FirstAt: e.At}
			p.Exercises[e.Exercise] = x
		}
		return x
	}
	switch e.Kind {
	case KindLessonOpened:
		if e.Lesson != p.Lesson {
			p.Lesson, p.LessonSince, p.LastProgress = e.Lesson, e.At, e.At
		}
		if !slices.Contains(p.LessonsOpened, e.Lesson) {
			p.LessonsOpened = append(p.LessonsOpened, e.Lesson)
		}
	case KindGoalReached:
		p.LastProgress = e.At
		if p.Goals == nil {
			p.Goals = make(map[string]Source)
		}
		if k := e.Lesson + "/" + e.Item; p.Goals[k] != SourceServer { // the server's word stands
			p.Goals[k] = e.Reporter()
		}
	case KindPredictionMade:
		p.LastProgress = e.At
		if p.Predictions == nil {
			p.Predictions = make(map[string]Prediction)
		}
		k := e.Lesson + "/" + e.Item
		if old, answered := p.Predictions[k]; !answered || old.Source != SourceServer && e.Reporter() == SourceServer {
			p.Predictions[k] = Prediction{Correct: e.Passed, Source: e.Reporter()} // the first answer is the prediction
		}
	case KindQuizAnswered:
		p.LastProgress = e.At
		if p.Quizzes == nil {
			p.Quizzes = make(map[string]bool)
		}
		p.Quizzes[e.Lesson+"/"+e.Item] = e.Passed
	case KindExerciseChecked:
		if e.Reporter() != SourceServer {
			// A browser's claim of a check (sent before the server
			// recorded checks itself) is not evidence of one.
			return p
		}
		x := exercise()
		x.Attempts++
		p.LastProgress = e.At
		x.History = append(x.History, Attempt{EventID: e.ID, At: e.At, Passed: e.Passed, Counterexample: e.Detail, Playground: e.Playground})
		if len(x.History) > MaxAttemptsKept {
			x.History = slices.Delete(x.History, 0, len(x.History)-MaxAttemptsKept)
		}
		if e.Passed {
			x.FailsSincePass, x.Counterexample, x.Playground = 0, "", ""
			if x.PassedAt.IsZero() {
				x.PassedAt = e.At
			}
		} else {
			x.FailsSincePass++
			x.Counterexample, x.Playground = e.Detail, e.Playground
		}
	case KindChaosRun:
		if int64(e.Number) == c.Chaos.ID && c.Chaos.ID != 0 { // a late answer to an older push counts for nothing
			if p.ChaosRuns == nil {
				p.ChaosRuns = make(map[string]bool)
			}
			p.ChaosRuns[e.Item] = e.Passed
		}
	case KindHintUsed:
		if x := exercise(); e.Number > x.Hints {
			x.Hints = e.Number
		}
	case KindHandRaised:
		p.HandRaised = true
	case KindHandLowered:
		p.HandRaised = false
	}
	return p
}

// Joined lists the learners in joining order.
func (c *Class) Joined() []*LearnerProgress {
	rows := make([]*LearnerProgress, len(c.order))
	for i, id := range c.order {
		rows[i] = c.learners[id]
	}
	return rows
}

// Learner returns one learner's row, or nil.
func (c *Class) Learner(id int64) *LearnerProgress { return c.learners[id] }

// Rows lists the learners, those who need help first (a raised hand before
// failed checks before slowness, longest waiting first within each), then
// the rest in joining order.
func (c *Class) Rows(now time.Time) []*LearnerProgress {
	rows := make([]*LearnerProgress, 0, len(c.order))
	rank := make(map[int64]int, len(c.order))
	for _, id := range c.order {
		p := c.learners[id]
		rows = append(rows, p)
		rank[id] = 3
		if why := p.Stuck(now); len(why) > 0 {
			rank[id] = map[string]int{StuckHand: 0, StuckFailures: 1, StuckSlow: 2}[why[0]]
		}
	}
	sort.SliceStable(rows, func(i, j int) bool {
		return rank[rows[i].Learner.ID] < rank[rows[j].Learner.ID]
	})
	return rows
}

// CounterexampleCount is how many learners' handlers fail an exercise with
// counterexamples of one shape.
type CounterexampleCount struct {
	Exercise string
	// Counterexample is the group's most common script, and Playground
	// the playground state of one learner who failed with it (empty if
	// their page did not send one): what "show it to the class" opens.
	Counterexample string
	Playground     string
	Learners       int
}

// Counterexamples groups the current failing counterexamples of every
// exercise by shape, most common first. shape maps a counterexample's
// script to its shape (the same schedule with other message or worker
// names, say); nil groups equal scripts only.
func (c *Class) Counterexamples(shape func(script string) string) []CounterexampleCount {
	if shape == nil {
		shape = func(s string) string { return s }
	}
	type group struct {
		learners int
		scripts  map[string]int
		examples map[string]string // script → a playground state failing with it
	}
	groups := make(map[[2]string]*group)
	for _, id := range c.order { // joining order: the example shown is stable
		for ex, x := range c.learners[id].Exercises {
			if x.Counterexample == "" || !x.PassedAt.IsZero() {
				continue
			}
			k := [2]string{ex, shape(x.Counterexample)}
			g := groups[k]
			if g == nil {
				g = &group{scripts: make(map[string]int), examples: make(map[string]string)}
				groups[k] = g
			}
			g.learners++
			g.scripts[x.Counterexample]++
			if g.examples[x.Counterexample] == "" {
				g.examples[x.Counterexample] = x.Playground
			}
		}
	}
	out := make([]CounterexampleCount, 0, len(groups))
	for k, g := range groups {
		best := ""
		for script, n := range g.scripts {
			if best == "" || n > g.scripts[best] || n == g.scripts[best] && script < best {
				best = script
			}
		}
		playground := g.examples[best]
		if playground == "" { // an older page sent none for it: any other of the shape
			for _, p := range g.examples {
				if p != "" && (playground == "" || p < playground) {
					playground = p
				}
			}
		}
		out = append(out, CounterexampleCount{Exercise: k[0], Counterexample: best, Playground: playground, Learners: g.learners})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Learners != out[j].Learners {
			return out[i].Learners > out[j].Learners
		}
		if out[i].Exercise != out[j].Exercise {
			return out[i].Exercise < out[j].Exercise
		}
		return out[i].Counterexample < out[j].Counterexample
	})
	return out
}

// ChaosSurvivors counts, for the last chaos push, the learners' handlers
// re-run with the fault that held before it: how many still hold, and how
// many were re-run.
func (c *Class) ChaosSurvivors() (survived, ran int) {
	for _, p := range c.learners {
		for _, ok := range p.ChaosRuns {
			ran++
			if ok {
				survived++
			}
		}
	}
	return survived, ran
}

// LessonCount is how many learners are on one lesson.
type LessonCount struct {
	Lesson   string
	Learners int
}

// Where counts learners per lesson, in the room's lesson order, for the
// progress chart; learners on a lesson outside the room's list come last.
func (c *Class) Where() []LessonCount {
	n := make(map[string]int)
	for _, p := range c.learners {
		if p.Lesson != "" {
			n[p.Lesson]++
		}
	}
	var out []LessonCount
	for _, l := range c.Room.Lessons {
		out = append(out, LessonCount{l, n[l]})
		delete(n, l)
	}
	var rest []string
	for l := range n {
		rest = append(rest, l)
	}
	sort.Strings(rest)
	for _, l := range rest {
		out = append(out, LessonCount{l, n[l]})
	}
	return out
}

// Passed counts the learners who passed an exercise.
func (c *Class) Passed(exercise string) int {
	n := 0
	for _, p := range c.learners {
		if x := p.Exercises[exercise]; x != nil && !x.PassedAt.IsZero() {
			n++
		}
	}
	return n
}

// Clone returns a deep copy of the class, which the caller may change
// (apply events to) without touching c.
func (c *Class) Clone() *Class {
	out := &Class{Room: c.Room, LastEventID: c.LastEventID, learners: make(map[int64]*LearnerProgress, len(c.learners)),
		order: slices.Clone(c.order), Pace: c.Pace, Chaos: c.Chaos, Countdown: c.Countdown, names: maps.Clone(c.names)}
	out.Room.Lessons, out.Room.Exercises = slices.Clone(c.Room.Lessons), slices.Clone(c.Room.Exercises)
	for id, p := range c.learners {
		out.learners[id] = p.clone()
	}
	return out
}

func (p *LearnerProgress) clone() *LearnerProgress {
	q := *p
	q.Exercises = make(map[string]*ExerciseProgress, len(p.Exercises))
	for k, x := range p.Exercises {
		y := *x
		y.History = slices.Clone(x.History)
		q.Exercises[k] = &y
	}
	q.ChaosRuns = maps.Clone(p.ChaosRuns)
	q.Goals = maps.Clone(p.Goals)
	q.Quizzes = maps.Clone(p.Quizzes)
	q.Predictions = maps.Clone(p.Predictions)
	q.LessonsOpened = slices.Clone(p.LessonsOpened)
	return &q
}
