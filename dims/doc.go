// Package dims is the vocabulary of where a site's traffic comes from:
// the dimensions a hit is counted by (referrer host, channel, country,
// network, browser, operating system, device, crawler), their names, and
// Counter, which counts hits by dimension value per site and UTC day with
// a bound on the values kept.
//
// Every hit has exactly one value in each dimension (Values), so a site
// day's counts of each dimension sum to its views. A value is a small
// string, interned by whoever classified it (package referrer, geo,
// uafamily, botclass): Counter keeps the strings it is given and copies
// nothing on a value it already holds.
//
// # The bound
//
// Counter keeps, per site, day and dimension, the first Limits[d] values
// it meets in the order of the hits, and counts every later value as
// Other ("(other)"), which is always kept. Which values are kept depends
// on the order of the hits and on the Counter's life, as with
// max_pages_per_minute (package aggregate): a restart, a reload or a
// replay starts afresh, and so does a day Forget dropped (the aggregator
// forgets the days before yesterday that counted nothing between two
// drains: a late line, or an old day a replay comes back to). The sums
// never change: a hit is counted once, under its value or under Other.
//
// Caveats:
//   - Across hosts, a site day holds up to hosts × Limits[d] values of a
//     dimension, each host's first ones: the fleet's values are the union,
//     and a value one host folded into Other is counted under its name by
//     another. The top values a reader shows can therefore differ from the
//     true top values, never the sums.
//   - A Counter is not safe for concurrent use: the aggregator's goroutine
//     owns it.
//   - Cost: a warm Add is 71 to 84 ns a hit for the eight dimensions (2.2
//     to 2.6 times one map increment of a page's count; go test -bench Add
//     ./dims), 0 allocations: a compare per dimension whose value is the
//     site day's hit before's, a small table or a map lookup for the
//     others. In the aggregator (BenchmarkDimensionsCost, package
//     aggregate) the counting is about ×0.12 of a line's parse and sums;
//     counting groups of values by address instead (instructions -20%)
//     measured the same.
package dims
