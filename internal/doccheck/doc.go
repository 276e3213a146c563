// Package doccheck holds no code: its test keeps the documentation true
// to the tree. It checks that the package table of docs/architecture.md
// ("## Packages") has one row per package of the module and that each
// row's last column lists exactly the module's packages that package's
// non-test files import (as go list prints them, build constraints of
// this platform applied), and that every relative link in docs/*.md and
// README.md names a file that exists and, with a #fragment, a heading of
// that file (GitHub's anchors).
//
// Caveats:
//   - Imports are read with go/build for this GOOS and GOARCH: a file
//     built only elsewhere is not counted, as go list would not count it.
//   - Links inside fenced code blocks are not checked, and headings there
//     are not anchors.
package doccheck
