// Package workshopweb is workshop mode's web feature (package workshop
// holds the rooms): the instructor's home, class view, projector page
// with its QR code, pace and chaos pushes, exports; the learner's join
// page, room, raised hand and progress events (each POST idempotent by
// its Idempotency-Key); and the live streams (server-sent events) of both.
//
// Pages is built with what it needs of the server (the workshop state,
// nil when workshop mode is off, the public URL's base and origin, the
// client-naming limiter, the current view) and lists its routes (Routes).
// A lesson page asks it whether the instructor's pace has opened the
// lesson (LessonLocked) and draws nothing of the workshop itself.
package workshopweb
