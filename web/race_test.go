//go:build race

package web

import (
	"idemlab/web/admit"
	"idemlab/web/exercise"
)

// raceSlowdown: the race detector makes SQLite several times slower, so
// the limits that are measured in CPU or wall time (a check's deadline, a
// run's token cost) are scaled in race builds of the tests; without the
// detector they are the server's own.
const raceSlowdown = 10

func init() {
	admit.AdmissionCostUnit *= raceSlowdown
	admit.CheckCostUnit *= raceSlowdown
	exercise.ExerciseCheckTimeout *= raceSlowdown
}

// raceEnabled: the tests run with -race; the longest ones check a sample.
const raceEnabled = true
