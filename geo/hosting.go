package geo

import (
	_ "embed"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/logtally/logtally/internal/pinned"
)

// The embedded hosting list: see data/VERSIONS and doc.go.
var (
	//go:embed data/lists_vpn/datacenter-asn.txt
	hostingList string
	//go:embed data/VERSIONS
	versions string
)

// hosting is the embedded list, parsed: sorted AS numbers.
var hosting = sync.OnceValue(func() []uint32 {
	l, err := parseASNs(hostingList)
	if err != nil {
		panic("geo: embedded data/lists_vpn/datacenter-asn.txt: " + err.Error()) // the tests read it
	}
	return l
})

// parseASNs reads one AS number a line, sorted and once each.
func parseASNs(s string) ([]uint32, error) {
	var l []uint32
	for i, line := range strings.Split(strings.TrimSuffix(s, "\n"), "\n") {
		n, err := strconv.ParseUint(line, 10, 32)
		if err != nil || n == 0 {
			return nil, fmt.Errorf("line %d: not an AS number", i+1)
		}
		if len(l) > 0 && uint32(n) <= l[len(l)-1] {
			return nil, fmt.Errorf("line %d: not sorted or repeated", i+1)
		}
		l = append(l, uint32(n))
	}
	return l, nil
}

// Hosting reports whether asn is a hosting or data-centre network (cloud,
// VPS, colocation, VPN providers' hosts: not where people browse from),
// by the embedded X4BNet lists_vpn datacenter list. A browser user agent
// from such a network is likely automated. It does not depend on the
// databases read: any DB, nil too, answers the same.
func (d *DB) Hosting(asn uint32) bool {
	_, ok := slices.BinarySearch(hosting(), asn)
	return ok
}

// HostingVersion describes the hosting list's upstream commit, from
// data/VERSIONS, as the other pinned lists are (pinned.Version):
// "lists_vpn@<commit, 12 digits> (<commit date>)"; logtally version
// prints it.
func HostingVersion() string { return pinned.Version(versions) }
