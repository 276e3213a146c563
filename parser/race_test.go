//go:build race

package parser

// raceEnabled: sync.Pool (used by regexp) drops items under the race
// detector, so allocation counts with regexps are not checked.
const raceEnabled = true
