package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
)

// version is set at build time with -ldflags "-X main.version=v1.2.3".
var version = "dev"

func cmdVersion(w io.Writer) error {
	v := version
	if bi, ok := debug.ReadBuildInfo(); ok && v == "dev" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		v = bi.Main.Version
	}
	_, err := fmt.Fprintf(w, "logtally %s %s %s/%s\n", v, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	return err
}
