//go:build race

package admit

// raceEnabled: the tests run with -race, whose limits are scaled (playground's sandboxSlowdown).
const raceEnabled = true
