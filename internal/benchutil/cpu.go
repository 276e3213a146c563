package benchutil

import (
	"syscall"
	"time"
	"unsafe"
)

// ThreadCPU returns the CPU time the calling thread has used
// (CLOCK_THREAD_CPUTIME_ID, in nanoseconds), or 0 if the clock cannot be
// read. A benchmark that times a stretch of work with it, between
// runtime.LockOSThread and UnlockOSThread, counts its own CPU and not the
// time other processes of a busy machine took the core: a ratio of two
// such stretches holds under load. Work done on other threads (the
// garbage collector's background marking) is not in it.
func ThreadCPU() time.Duration {
	const clockThreadCPUTime = 3 // CLOCK_THREAD_CPUTIME_ID
	var ts syscall.Timespec
	if _, _, e := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockThreadCPUTime, uintptr(unsafe.Pointer(&ts)), 0); e != 0 {
		return 0
	}
	return time.Duration(ts.Nano())
}
