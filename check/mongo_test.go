package check

import (
	"errors"
	"testing"

	"go.mongodb.org/mongo-driver/v2/mongo"
)

// What the reader's user may read is told by MongoDB's answer to a find:
// refused for lack of a role (code 13, or Atlas's 8000), read (a
// document or none), or another failure.
func TestReadableOf(t *testing.T) {
	for _, tc := range []struct {
		err      error
		readable bool
		fails    bool
	}{
		{nil, true, false},
		{mongo.ErrNoDocuments, true, false},
		{mongo.CommandError{Code: 13, Name: "Unauthorized", Message: "not authorized on logtally to execute command { find: \"salts\" }"}, false, false},
		{mongo.CommandError{Code: 8000, Name: "AtlasError", Message: "user is not allowed to do action [find] on [logtally.salts]"}, false, false},
		{mongo.CommandError{Code: 8000, Name: "AtlasError", Message: "quota exceeded"}, false, true},
		{mongo.CommandError{Code: 2, Message: "bad value"}, false, true},
		{errors.New("connection reset"), false, true},
	} {
		readable, err := readableOf(tc.err)
		if readable != tc.readable || (err != nil) != tc.fails {
			t.Errorf("%v: %v %v", tc.err, readable, err)
		}
	}
}
