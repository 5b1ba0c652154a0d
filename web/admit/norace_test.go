//go:build !race

package admit

// raceEnabled: the tests run without -race (race_test.go).
const raceEnabled = false
