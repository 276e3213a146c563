package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"

	"github.com/logtally/logtally/observe"
)

// version is set at build time with -ldflags "-X main.version=v1.2.3".
var version = "dev"

// cmdVersion prints the version, then the pinned data lists built in
// (each list's commit and date): what a bug report needs to say which
// bots, referrers and hosting networks the counts were classified by.
func cmdVersion(w io.Writer) error {
	v := version
	if bi, ok := debug.ReadBuildInfo(); ok && v == "dev" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		v = bi.Main.Version
	}
	if _, err := fmt.Fprintf(w, "logtally %s %s %s/%s\n", v, runtime.Version(), runtime.GOOS, runtime.GOARCH); err != nil {
		return err
	}
	for _, l := range observe.Lists() {
		if _, err := fmt.Fprintf(w, "%s: %s\n", l.Name, l.Version); err != nil {
			return err
		}
	}
	return nil
}
