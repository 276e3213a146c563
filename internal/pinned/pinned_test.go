package pinned

import (
	"slices"
	"strings"
	"testing"
)

func TestOwnList(t *testing.T) {
	text := "# a comment\n\nGooglebot\tgoogle.com\n  \n  spaced  \t a source \n#x\tnot a value\n"
	got, err := OwnList("data/x.txt", text)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"Googlebot", "spaced"}; !slices.Equal(got, want) {
		t.Errorf("OwnList = %q, want %q", got, want)
	}
	for text, line := range map[string]string{
		"ok\tsource\nno-source\n":   ":2:", // no TAB
		"# c\nok\tsource\nv\t \n":   ":3:", // an empty source
		"\n\n\n\t source\n":         ":4:", // no value
		"ok\tsource\r\nbad\r\n":     ":2:",
		"ok\tsource\n # indented\n": ":2:", // a comment starts the line
	} {
		_, err := OwnList("data/x.txt", text)
		if err == nil || !strings.Contains(err.Error(), "data/x.txt"+line) {
			t.Errorf("OwnList(%q) = %v, want an error naming data/x.txt%s", text, err, line)
		}
	}
}

const versions = "# The upstream lists embedded in x, written by refresh.sh: do not edit.\n" +
	"# name\trepository\tcommit\tcommit date (UTC)\tlicence\tupstream file -> embedded file\n" +
	"one\thttps://github.com/o/one\t7c7f9f254f16fcbc7d0fcb60d0a188897c00b050\t2026-07-02\tMIT\ta.json -> one/a.txt\n" +
	"short\thttps://github.com/o/short\tabc\n" +
	"\n" +
	"two\thttps://github.com/o/two\tb1c66b3\t2026-08-20\tCC0-1.0\tb.txt -> two/b.txt\n"

func TestLists(t *testing.T) {
	want := []List{
		{"one", "https://github.com/o/one", "7c7f9f254f16fcbc7d0fcb60d0a188897c00b050", "2026-07-02"},
		{"two", "https://github.com/o/two", "b1c66b3", "2026-08-20"},
	}
	if got := Lists(versions); !slices.Equal(got, want) {
		t.Errorf("Lists = %q, want %q", got, want)
	}
	if got := Lists(""); got != nil {
		t.Errorf("Lists(\"\") = %q", got)
	}
}

func TestVersion(t *testing.T) {
	if got, want := Version(versions), "one@7c7f9f254f16 (2026-07-02), two@b1c66b3 (2026-08-20)"; got != want {
		t.Errorf("Version = %q, want %q", got, want)
	}
}
