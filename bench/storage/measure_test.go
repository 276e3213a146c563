package main

import (
	"bytes"
	"slices"
	"testing"

	"github.com/klauspost/compress/zstd"
)

// TestRunsCutAtRunSize checks that documents are gathered in order into
// runs of runSize bytes or more (the last excepted), and that the
// compressed size is the sum of each run compressed alone.
func TestRunsCutAtRunSize(t *testing.T) {
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1))
	if err != nil {
		t.Fatal(err)
	}
	defer enc.Close()
	doc := func(n int, b byte) []byte { return bytes.Repeat([]byte{b}, n) }
	docs := [][]byte{doc(20000, 'a'), doc(12000, 'b'), doc(800, 'c'), doc(40000, 'd'), doc(100, 'e'), doc(7, 'f')}
	// Runs: a+b+c (32,800 >= 32,768), d (alone past it), e+f (the rest).
	want := [][]byte{slices.Concat(docs[0], docs[1], docs[2]), docs[3], slices.Concat(docs[4], docs[5])}
	r := runs{enc: enc}
	for _, d := range docs {
		r.add(d)
	}
	got := r.close()
	var sum int64
	for _, w := range want {
		sum += int64(len(enc.EncodeAll(w, nil)))
	}
	if r.n != len(want) || got != sum {
		t.Fatalf("%d runs, %d bytes; want %d runs, %d bytes", r.n, got, len(want), sum)
	}
}

func TestHotPath(t *testing.T) {
	line := []byte(`1.2.3.4 - - [17/May/2024:00:00:01 +0200] "GET /blog/faq-3?page=2 HTTP/1.1" 200 512 "-" "curl/8.5.0"`)
	got, err := hotPath(nil, line, 10)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := hotPath(nil, []byte(`5.6.7.8 - - [17/May/2024:00:00:02 +0200] "POST /blog/faq-3 HTTP/1.1" 404 0 "-" "-"`), 10)
	page := func(l []byte) string {
		_, after, _ := bytes.Cut(l, []byte(` /hot/`))
		p, _, _ := bytes.Cut(after, []byte(" "))
		return string(p)
	}
	if !bytes.HasPrefix(got, []byte(`1.2.3.4 - - [17/May/2024:00:00:01 +0200] "GET /hot/`)) ||
		!bytes.HasSuffix(got, []byte(` HTTP/1.1" 200 512 "-" "curl/8.5.0"`)) || page(got) == "" || page(got) != page(again) {
		t.Fatalf("hotPath: %s and %s", got, again)
	}
	if _, err := hotPath(nil, []byte("no request here"), 10); err == nil {
		t.Fatal("a line without a request: no error")
	}
}

func TestCollectionOrder(t *testing.T) {
	got := collectionOrder([]string{"zeta", "sites", "ledger", "minutes", "visitors", "daily", "alpha", "monthly"})
	want := []string{"daily", "minutes", "monthly", "sites", "visitors", "alpha", "ledger", "zeta"}
	if !slices.Equal(got, want) {
		t.Fatalf("order %v, want %v", got, want)
	}
	if !isBookkeeping("ledger") || !isBookkeeping("progress") || !isBookkeeping("salts") || isBookkeeping("visitors") {
		t.Fatal("bookkeeping: ledger, progress and salts only")
	}
}
