// Package exercise is the exercises feature: an exercise block inside a
// lesson (ExerciseBlock), its own page (/exercises/{id}), the check of a
// learner's handler by the engine's checker (a result page for the form,
// POST /api/v1/check for exercise.js), the inverse exercises (write the
// script that breaks a given handler), and the handler reference page.
//
// A Checker is built with what it needs from the server (Deps: the
// current view, the PostgreSQL ledgers and their gate, the metrics, the
// client's fair share) and lists its routes (Routes); package web
// assembles them. Checks are pure and store nothing.
package exercise
