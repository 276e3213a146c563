package parser

// The hit's client address.

import "bytes"

// maxClientLen bounds Hit.Client: the longest IPv6 address with a zone
// fits, and a host name an odd proxy logs usually does; a longer value is
// garbage, no client.
const maxClientLen = 64

// clientOf returns the hit's client: with Config.Client
// ClientForwardedFor the leftmost address of the X-Forwarded-For list
// when that is neither empty nor "-", else the remote address; nil when
// there is none, it is "-", or it is longer than maxClientLen.
func (p *Parser) clientOf(f *fields) []byte {
	c := f.client
	if p.xff {
		if l := leftmost(f.xff); len(l) > 0 && !(len(l) == 1 && l[0] == '-') {
			c = l
		}
	}
	if len(c) == 0 || len(c) > maxClientLen || len(c) == 1 && c[0] == '-' {
		return nil
	}
	return c
}

// leftmost returns the first element of an X-Forwarded-For list
// ("client, proxy1, proxy2"), trimmed of spaces and tabs.
func leftmost(list []byte) []byte {
	if i := bytes.IndexByte(list, ','); i >= 0 {
		list = list[:i]
	}
	for len(list) > 0 && (list[0] == ' ' || list[0] == '\t') {
		list = list[1:]
	}
	for n := len(list); n > 0 && (list[n-1] == ' ' || list[n-1] == '\t'); n-- {
		list = list[:n-1]
	}
	return list
}
