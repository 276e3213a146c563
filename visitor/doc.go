// Package visitor is the maths of unique visitors: the keyed hash that
// turns a hit into a visitor key, and the HyperLogLog sketches that count
// distinct keys and merge by a register-wise maximum (what MongoDB's $max
// does in place). It does no I/O and imports only packages fnv1a and
// period (the calendar of its salt periods).
//
// # Visitor key
//
// A visitor is a (site, client address, user agent) within one salt
// period. Key hashes the three fields under the period's Salt, 16 random
// bytes every host shares, with SipHash: a keyed pseudo-random function,
// so without the salt nobody can compute the key of a guessed address, and
// once the salt is deleted a stored register can no longer be linked to
// one. The fields are framed by their lengths first (uvarints), so no two
// triples hash the same message. Key is part of the stored format: hosts
// of two versions that key differently count every visitor twice in a
// period (a test pins one value).
//
// Key uses SipHash-1-3, not the paper's SipHash-2-4 (both are here, each
// checked against 64 published vectors). Measured (BenchmarkKey, a
// shared AMD EPYC) for a 15-byte site, an IPv4 address and a 120-byte
// user agent: 48 ns a key against 80 ns, on a parse-and-aggregate path of
// about 265 ns a line (aggregate's BenchmarkMeasuresCost) whose budget for
// visitors is 15 %. 1-3 is the variant Rust's and Python's hash tables
// key with; the security margin it gives up does not matter here: a
// register keeps no key, only the largest rank of the keys that fell in
// it, and whoever can read the registers during the period can read the
// salt beside them anyway. The protection is the salt's deletion, not the
// rounds.
//
// # Sketches and the estimator
//
// A Sketch of precision p has 2^p registers: a key's top p bits pick the
// register, its rank is the leading zeros of the other 64-p bits plus one
// (at most 65-p), and a register keeps the largest rank it saw. Estimate is
// Otmar Ertl's improved raw estimator ("New cardinality estimation
// algorithms for HyperLogLog sketches", 2017, algorithm 6, the one Redis
// uses): from the histogram of register values, with his σ and τ series
// correcting the empty and saturated registers, it is close to unbiased
// from 0 to about 10^19 keys (near 2^64, where the registers saturate)
// with no bias table and no switch of correction. Its relative standard error is StdError(p) = 1.04/√2^p:
// 1.6 % at SitePrecision (12), 3.3 % at PagePrecision (10). Tests hold the
// estimate within 3 standard errors at 10^3 … 10^6 added keys and, by
// registers drawn from their distribution, at 10^9 … 10^19.
//
// Merge is the register-wise maximum: commutative, associative,
// idempotent. The sketch of a batch sent twice, or of the same visitor
// seen by three hosts, is the sketch of the union, so $max needs no batch
// guard. Risen lists the registers above what a host last sent: what a
// flush must $max.
//
// # Sizes
//
// Measured by TestSizes (a document {_id, v: {"0": int32, …}}, BSON):
//
//	precision            registers  zero-filled document
//	8                        256        2,239 bytes
//	10 (pages)             1,024        9,175 bytes
//	12 (sites)             4,096       39,895 bytes
//	14                    16,384      169,159 bytes
//
//	distinct keys n          10     100    1,000   10,000  100,000
//	non-zero at p=10         10      96      636    1,024    1,024
//	non-zero at p=12         10      99      875    3,740    4,096
//	doc of non-zero, p=10   134     903    5,716    9,175    9,175
//	doc of non-zero, p=12   142   1,015    8,580   36,438   39,895
//
// About 9 bytes of BSON a register (a field name of its index, a type
// byte, an int32). $max on a missing field creates it, so a stored sketch
// holds only its non-zero registers and grows with its visitors: most
// pages (few visitors) cost under 1 KB a day whatever the precision; 10
// rather than 8 costs nothing for them and halves the error of the pages
// that have visitors to count.
//
// In memory a dense sketch is 2^p bytes; NewSparse makes one that keeps
// its non-zero registers as a sorted list (4 bytes each: 100 visitors at
// p=10 hold 96 entries, 384 bytes against 1,024) and turns dense by itself
// at 2^p/4 entries. Adding a key to a dense sketch takes about 3 ns and
// allocates nothing; to a sparse one 6–8 ns for a register already held
// and 25–45 ns to insert one (the list may grow). The buffer's encoding
// (AppendBinary, Decode) is the shorter of dense (2+2^p bytes) and sparse
// (about 2 bytes a non-zero register): 195 bytes for 100 visitors at p=10.
//
// # Caveats
//
//   - A visitor is (site, address, user agent) within one salt period.
//     People behind one NAT or proxy with the same browser build count
//     once; one person with two browsers, or whose address changes (mobile
//     networks, IPv6 privacy addresses), counts more than once. With daily
//     salts, one person on two days is two keys: a sum of daily uniques is
//     not the uniques of the range.
//   - Bots are not visitors: the caller leaves them out; Key does not know.
//   - The estimate is a random quantity: about 68 % of days lie within one
//     standard error of the truth, 99.7 % within three; state the error
//     beside the number.
//   - Key hashes the fields as given: the caller decides whether a site or
//     an address is normalised (case, IPv4-mapped IPv6) before.
//   - Merge of two precisions panics: the precisions are constants, so a
//     mismatch is a programming error, not bad input. Damaged bytes or
//     registers (Decode, SetMax) are errors wrapping ErrDamaged.
//   - A Sketch is not safe for concurrent use.
package visitor
