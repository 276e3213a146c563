package measure

import (
	"encoding/binary"
	"testing"

	"github.com/logtally/logtally/botclass"
)

func TestAddAndMerge(t *testing.T) {
	var a, b Vector
	a.Add(&Hit{Status: 200, Bytes: 10, RT: 5000})
	a.Add(&Hit{Status: 101, Bot: botclass.AI, RT: -1})
	b.Add(&Hit{Status: 503, Bot: botclass.Suspect, Bytes: 7, RT: 9000})
	b.Add(&Hit{Status: 404, Bot: botclass.Search, RT: 100})
	a.Merge(&b)
	want := Vector{Views: 4, Status2xx: 1, StatusOther: 1, Status5xx: 1, Status4xx: 1,
		BotAI: 1, BotSuspect: 1, BotSearch: 1, Bytes: 17, RTSum: 14100, RTCount: 3, RTMax: 9000}
	if a != want {
		t.Fatalf("got %v\nwant %v", &a, &want)
	}
	// Merge keeps the greater maximum whichever side holds it.
	var c Vector
	c.Add(&Hit{Status: 200, RT: 1})
	c.Merge(&a)
	if c[RTMax] != 9000 || c[RTCount] != 4 {
		t.Fatalf("merge into a smaller maximum: %v", &c)
	}
	names := map[botclass.Class]string{botclass.Search: "bot_search", botclass.AI: "bot_ai",
		botclass.Tool: "bot_tool", botclass.Other: "bot_other", botclass.Suspect: "bot_suspect"}
	for cl := botclass.Person; cl <= botclass.NumClasses; cl++ {
		i, ok := Bot(cl)
		if want, counted := names[cl]; ok != counted || ok && i.Name() != want {
			t.Errorf("Bot(%v) = %s, %v; want %q", cl, i.Name(), ok, want)
		}
	}
}

func TestEncoding(t *testing.T) {
	var v Vector
	for i := range v {
		v[i] = uint64(i) * 1_000_003
	}
	v[RTMax] = 1 << 63
	b := v.AppendBinary(nil)
	if len(b) == legacyLen {
		t.Fatal("an encoding as long as a legacy value")
	}
	var got Vector
	if err := got.Decode(b); err != nil || got != v {
		t.Fatalf("round trip: %v, %v", &got, err)
	}
	if err := got.Decode(binary.BigEndian.AppendUint64(nil, 42)); err != nil || got != OfViews(42) {
		t.Fatalf("legacy value: %v, %v", &got, err)
	}
	var zero Vector
	if n := len(zero.AppendBinary(nil)); n != 1+int(N) {
		t.Fatalf("zero vector encodes in %d bytes, want %d", n, 1+N)
	}
	for _, bad := range [][]byte{nil, {2, 0}, b[:len(b)-1], append(b[:len(b):len(b)], 0)} {
		if err := got.Decode(bad); err == nil {
			t.Errorf("Decode(%x) = nil error", bad)
		}
	}
}
