//go:build race

package playground

// raceDetector: this binary was built with -race, which makes
// modernc.org/sqlite's translated C run several times slower ("execution
// time by 2-20x", https://go.dev/doc/articles/race_detector#Runtime_Overheads).
const raceDetector = true

// sandboxSlowdown scales the limits a learner's statement is held to
// (sandboxDeadline): under the race detector, the same statement, the same
// verdict.
const sandboxSlowdown = 10
