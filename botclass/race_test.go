//go:build race

package botclass

// raceEnabled: sync.Pool (regexp keeps its machines in one) drops items
// under the race detector, so a regexp match may allocate a machine.
const raceEnabled = true
