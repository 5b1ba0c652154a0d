package site

import (
	"net/url"
	"strings"

	"idemlab/lessons"
	"idemlab/playground"
)

// Where an exercise lives, shared by the exercises' pages and the
// playground's way back to the exercise a replay came from.

// ExercisePath is an exercise's page, ExerciseCheckPath its form's
// target, ExerciseDOMID its block's id inside its lesson.
func ExercisePath(id string) string      { return "/exercises/" + id }
func ExerciseCheckPath(id string) string { return "/exercises/" + id + "/check" }
func ExerciseDOMID(id string) string     { return "ex-" + id }

// FindExercise looks an exercise up by id in a course, with its lesson.
func FindExercise(course *lessons.Course, id string) (*lessons.Lesson, *lessons.ExerciseSpec) {
	spec := course.Exercise(id)
	if spec == nil || spec.Exercise == nil {
		return nil, nil
	}
	if l := course.Lesson(spec.Lesson); l != nil {
		return l, spec
	}
	for _, l := range course.Lessons { // a course built by hand may leave Lesson empty
		for _, e := range l.Exercises {
			if e == spec {
				return l, spec
			}
		}
	}
	return nil, nil
}

// ExerciseTitle is an exercise's title, or a neutral one.
func ExerciseTitle(spec *lessons.ExerciseSpec) string {
	if t := strings.TrimSpace(spec.Title); t != "" {
		return t
	}
	return "Fix the handler"
}

// BreakBackQuery is the query that brings a replayed script back into an
// inverse exercise's editor.
func BreakBackQuery(events []playground.Event) string {
	return "?script=" + url.QueryEscape((&playground.Script{Events: events}).Lines())
}
