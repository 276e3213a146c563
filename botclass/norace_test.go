//go:build !race

package botclass

const raceEnabled = false
